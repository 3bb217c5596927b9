package standintest

import (
	"strings"
	"sync"
)

// tailBuffer keeps the last bytes standin wrote to stderr: its one-line error
// for a failed start is the last line, and a chatty run must not grow memory.
type tailBuffer struct {
	mu   sync.Mutex
	data []byte
}

const tailLimit = 16 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.data = append(b.data, p...)
	if len(b.data) > tailLimit {
		b.data = append([]byte(nil), b.data[len(b.data)-tailLimit:]...)
	}
	return len(p), nil
}

// lastLine is the last non-empty line written, or "" when there is none.
func (b *tailBuffer) lastLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(b.data), "\r\n\t "), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// leadingLines are the first n non-empty lines kept, joined with "; " (npm's
// errors lead with their cause and end with the path of a log).
func (b *tailBuffer) leadingLines(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var kept []string
	for _, line := range strings.Split(string(b.data), "\n") {
		if line = strings.TrimSpace(line); line != "" && len(kept) < n {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "; ")
}
