package integration

import (
	"net"
	"sync"
	"testing"
)

// freezingProxy forwards connections to a server until it is frozen: then it
// stops passing bytes either way without closing anything, as a network
// partition does, so that callers wait on connections that look open. New
// connections are still accepted, and wait like the others.
type freezingProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	thawed *sync.Cond
	frozen bool
	closed bool
	conns  []net.Conn
}

func newFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{ln: ln, target: target}
	p.thawed = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// addr is the proxy's host:port.
func (p *freezingProxy) addr() string { return p.ln.Addr().String() }

func (p *freezingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

// forward dials the target for c and passes bytes both ways; a proxy
// frozen meanwhile dials once thawed.
func (p *freezingProxy) forward(c net.Conn) {
	if !p.track(c) || !p.wait() {
		c.Close()
		return
	}
	r, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(r) {
		c.Close()
		return
	}
	go p.pipe(r, c)
	go p.pipe(c, r)
}

// pipe copies from src to dst, holding what it read while the proxy is
// frozen; it closes both ends when either does.
func (p *freezingProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait blocks while the proxy is frozen; it reports false once it is closed.
func (p *freezingProxy) wait() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.frozen && !p.closed {
		p.thawed.Wait()
	}
	return !p.closed
}

// track remembers a connection to close with the proxy, unless it is closed.
func (p *freezingProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

// freeze stops every byte; thaw lets them through again.
func (p *freezingProxy) freeze() { p.set(true) }
func (p *freezingProxy) thaw()   { p.set(false) }

func (p *freezingProxy) set(frozen bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = frozen
	p.thawed.Broadcast()
}

// close closes the port and every connection.
func (p *freezingProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.thawed.Broadcast()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}
