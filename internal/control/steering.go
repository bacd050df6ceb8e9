package control

import "github.com/bm2dev/bm2/internal/steer"

// steerStore is where the scope keeps its projects' steering (package
// steer): the pins under Env.SteerPins, the locks and marks in the
// layout's SteerDir; none without a run directory.
func (c *Client) steerStore() steer.Store {
	return steer.ScopeStore(c.SteerPins, c.ScopeLayout())
}
