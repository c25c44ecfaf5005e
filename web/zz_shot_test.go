package web

import (
	"os"
	"testing"
)

func TestZZShot(t *testing.T) {
	f, _ := os.Create("/tmp/webshot/empty.html")
	RenderUnsubscribe(f, UnsubscribeData{Token: "tok", Email: "averyveryverylongaddress.with.many.parts@subdomain.example-company.com", ConfirmURL: "https://app.example.com/api/unsubscribe/confirm"})
	f.Close()
}
