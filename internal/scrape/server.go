package scrape

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// The bounds of `bm2 metrics --serve`, the scrape endpoint behind
// bm2-metrics.socket: whatever the number of connections, the exposition
// is computed at most once per scrapeCache (what systemd and the kernel
// are asked does not grow with the clients), at most scrapeConns
// connections are open at once, and the service exits once no
// connection has been open for scrapeIdle.
const (
	scrapeCache = time.Second
	scrapeConns = 256
	scrapeIdle  = 10 * time.Second
)

// Server answers scrapes on one listener: one HTTP/1.x exchange per
// connection (Answer), the exposition shared by every request within
// cacheFor of its computation.
//
// Any local user can connect (it is loopback TCP). What one can do to it:
// open connections, each of which costs a goroutine until it sends a
// request (at most ReadTimeout) or is answered; at most maxConns are
// open, and when they are all taken a new one takes the place of the
// oldest that has not sent its request yet (a scraper sends its request
// at once, a holder never does), so held connections delay no scrape.
// When every open connection is being answered, new ones wait in the
// kernel's queue. No connection makes systemd start anything, and the
// exposition is computed at most once per cacheFor.
type Server struct {
	expose   func() ([]byte, error)
	cacheFor time.Duration
	maxConns int
	idle     time.Duration
	now      func() time.Time
	warn     func(string)

	cache struct {
		sync.Mutex
		text []byte
		err  error
		at   time.Time
		ok   bool
	}

	mu        sync.Mutex
	cond      *sync.Cond
	conns     list.List // *scrapeConn, oldest first
	lastClose time.Time
}

// scrapeConn is one open connection; answering is set once its request
// is read, from when it is no longer evicted for a newer one.
type scrapeConn struct {
	net.Conn
	answering bool
	el        *list.Element
}

// exposition is s.expose's answer of at most cacheFor ago. Callers that
// come while it is computed wait for that computation and share it.
func (s *Server) exposition() ([]byte, error) {
	s.cache.Lock()
	defer s.cache.Unlock()
	if s.cache.ok && s.now().Sub(s.cache.at) < s.cacheFor {
		return s.cache.text, s.cache.err
	}
	s.cache.text, s.cache.err = s.expose()
	s.cache.at, s.cache.ok = s.now(), true
	return s.cache.text, s.cache.err
}

// Serve accepts on l until ctx ends, l fails, or no connection has been
// open for s.idle (then it returns nil; systemd starts it again at the
// next connection, which waits in the socket's queue meanwhile).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.cond = sync.NewCond(&s.mu)
	s.lastClose = s.now()
	stop := make(chan struct{})
	defer close(stop)
	var stopping sync.Once
	end := func() { stopping.Do(func() { l.Close() }) }
	go func() {
		tick := time.NewTicker(s.idle / 4)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				end()
				return
			case <-tick.C:
				s.mu.Lock()
				idle := s.conns.Len() == 0 && s.now().Sub(s.lastClose) >= s.idle
				s.mu.Unlock()
				if idle {
					end()
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		sc := s.admit(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.release(sc)
			s.answer(sc)
		}()
	}
}

// admit registers c, making room first: the oldest connection that has
// not sent its request is closed, or, when every one is being answered,
// admit waits for one to end.
func (s *Server) admit(c net.Conn) *scrapeConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.conns.Len() >= s.maxConns {
		var victim *scrapeConn
		for e := s.conns.Front(); e != nil; e = e.Next() {
			if sc := e.Value.(*scrapeConn); !sc.answering {
				victim = sc
				break
			}
		}
		if victim == nil {
			s.cond.Wait()
			continue
		}
		s.conns.Remove(victim.el)
		victim.el = nil
		victim.Conn.Close() // its handler's read fails, and it ends
	}
	sc := &scrapeConn{Conn: c}
	sc.el = s.conns.PushBack(sc)
	return sc
}

func (s *Server) release(sc *scrapeConn) {
	sc.Conn.Close()
	s.mu.Lock()
	if sc.el != nil {
		s.conns.Remove(sc.el)
		sc.el = nil
	}
	s.lastClose = s.now()
	s.cond.Signal()
	s.mu.Unlock()
}

// answer is one exchange on sc: the request within ReadTimeout, then
// the answer (within WriteTimeout, reply).
func (s *Server) answer(sc *scrapeConn) {
	sc.SetReadDeadline(time.Now().Add(ReadTimeout))
	in := readNotify{r: sc.Conn, first: func() {
		s.mu.Lock()
		sc.answering = sc.el != nil
		s.mu.Unlock()
	}}
	_, err := Answer(&in, sc.Conn, s.exposition)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		s.warn(fmt.Sprintf("%s: %v", sc.RemoteAddr(), err))
	}
}

// readNotify calls first once the connection has sent its first bytes: a
// scraper's request, not a connection held empty.
type readNotify struct {
	r     interface{ Read([]byte) (int, error) }
	first func()
	seen  bool
}

func (r *readNotify) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 && !r.seen {
		r.seen = true
		r.first()
	}
	return n, err
}

// New is the server of `bm2 metrics --serve`, within the bounds above:
// expose makes the exposition, warn is told what went wrong with a
// connection.
func New(expose func() ([]byte, error), warn func(string)) *Server {
	return &Server{cacheFor: scrapeCache, maxConns: scrapeConns, idle: scrapeIdle, now: time.Now, warn: warn, expose: expose}
}
