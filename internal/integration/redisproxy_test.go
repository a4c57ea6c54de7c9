package integration

import (
	"io"
	"net"
	"sync"
	"testing"
)

// redisProxy forwards connections to Redis until it is cut: then it closes
// every connection and its port, so Redis becomes unreachable under
// processes already using it.
type redisProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func newRedisProxy(t *testing.T, target string) *redisProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &redisProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(p.cutOff)
	return p
}

// addr is the proxy's host:port.
func (p *redisProxy) addr() string { return p.ln.Addr().String() }

func (p *redisProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		r, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, r) {
			c.Close()
			r.Close()
			continue
		}
		go func() { io.Copy(r, c); r.Close() }()
		go func() { io.Copy(c, r); c.Close() }()
	}
}

// track remembers a pair of connections, unless the proxy was cut.
func (p *redisProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns = append(p.conns, cs...)
	return true
}

// cutOff closes the port and every connection.
func (p *redisProxy) cutOff() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}
