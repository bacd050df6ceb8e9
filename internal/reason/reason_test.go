package reason

import "testing"

func TestResultReasons(t *testing.T) {
	for in, want := range map[string]Reason{"success": "", "exit-code": Exited, "signal": Killed,
		"core-dump": CoreDumped, "oom-kill": OOM, "start-limit-hit": Budget, "resources": "resources"} {
		if got := OfResult(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if !RuntimeBelowFloor.Refusal() || Exited.Refusal() {
		t.Error("Refusal")
	}
}
