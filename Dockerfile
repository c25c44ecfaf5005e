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
# IMAGES_DIR must exist and be writable by the nonroot user (uid/gid 65532);
# mount a volume on /data to keep images across containers.
COPY --from=build --chown=65532:65532 /out/data /data
ENV HTTP_ADDR=:8080 IMAGES_DIR=/data/images
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/contactbook"]
CMD ["serve"]
