package preflight

import (
	"context"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// A worker has no port: nothing on the host is looked at.
func TestSeePortsWorker(t *testing.T) {
	if got := SeePorts(context.Background(), nil, &config.Project{Mode: config.Worker}); !got.Worker || len(got.Ports) != 0 || got.Held != nil {
		t.Errorf("SeePorts(worker) = %+v", got)
	}
}

// A refused file's runtime is not asked.
func TestRuntimeRefused(t *testing.T) {
	if _, asked := Runtime(context.Background(), nil, &config.Project{}, false); asked {
		t.Error("Runtime asked a refused file's runtime")
	}
}
