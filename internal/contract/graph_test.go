package contract

import (
	"reflect"
	"testing"
)

func TestChainCycles(t *testing.T) {
	tr := func(targets ...string) Contract {
		var c Contract
		for _, x := range targets {
			c.ChainTriggers = append(c.ChainTriggers, ChainTrigger{Target: x, Condition: "a == 1"})
		}
		return c
	}
	got := ChainCycles(map[string]Contract{
		"/scan-health": tr("dev-cycle"),
		"dev-cycle":    tr("scan-health"),
		"/a":           tr("b"),
		"/b":           tr("c"),
		"/c":           tr(),
		"/self":        tr("/self"),
	})
	want := [][]string{{"/dev-cycle", "/scan-health", "/dev-cycle"}, {"/self", "/self"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cycles = %v, want %v", got, want)
	}
	if c := ChainCycles(map[string]Contract{"/a": tr("b"), "/b": tr("c")}); len(c) != 0 {
		t.Errorf("an acyclic chain has no cycles: %v", c)
	}
}
