# syntax=docker/dockerfile:1
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/contactbook ./cmd/contactbook \
 && mkdir -p /out/data/images

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/contactbook /contactbook
# Campaign images live in PostgreSQL. IMAGES_DIR is only where earlier versions
# kept them: mount the old volume on /data once and serve copies its files into
# the database at start-up (or run `contactbook images import`).
COPY --from=build --chown=65532:65532 /out/data /data
ENV HTTP_ADDR=:8080 IMAGES_DIR=/data/images
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/contactbook"]
CMD ["serve"]
