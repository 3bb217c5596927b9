package standintest_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

func getenv(name string) string { return os.Getenv(name) }

func getBody(t *testing.T, url, auth string) []byte {
	t.Helper()
	resp := send(t, http.MethodGet, url, auth, "")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s %v", url, resp.StatusCode, body, err)
	}
	return body
}

func getStatus(t *testing.T, url, auth string) int {
	t.Helper()
	resp := send(t, http.MethodGet, url, auth, "")
	resp.Body.Close()
	return resp.StatusCode
}

func put(t *testing.T, url, body string) []byte {
	t.Helper()
	resp := send(t, http.MethodPut, url, "", body)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT %s: %d %s %v", url, resp.StatusCode, answer, err)
	}
	return answer
}

func send(t *testing.T, method, url, auth, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
