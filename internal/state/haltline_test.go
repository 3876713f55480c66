package state

import "testing"

func TestHaltLine_OneLineThatReads(t *testing.T) {
	for in, want := range map[string]string{
		"deploy freeze\ncreated_at: 2026-03-02T09:00:00Z\n":                  "deploy freeze; created_at: 2026-03-02T09:00:00Z",
		"Saturation halt: 15 cycles.\nHuman review needed.\ncreated_at: x\n": "Saturation halt: 15 cycles. Human review needed. created_at: x",
		"  \n\nstop\r\n": "stop",
	} {
		if got := HaltLine(in); got != want {
			t.Errorf("HaltLine(%q) = %q, want %q", in, got, want)
		}
	}
}
