package artifact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func mustParse(t *testing.T, raw string) *Rubric {
	t.Helper()
	r, err := Parse(json.RawMessage(raw), "quality_rubric")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return r
}

func Test5G_RubricDefaultsAndInheritance(t *testing.T) {
	r := mustParse(t, `{
		"capture_method": "command",
		"capture_command": "sh capture.sh",
		"dimensions": [
			{"name": "latency", "weight": 0.5, "targets": [{"metric": "p95_ms", "op": "<=", "value": 200}]},
			{"name": "look", "capture_method": "screenshot", "capture_command": ["shot", "--full"]},
			{"name": "feel", "capture_method": "gameplay_metrics", "gameplay_metrics_command": "node tools/h.mjs",
			 "gameplay_metrics_hash": "SHA256:ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789"}
		]}`)
	if r.Bar != 0.70 || r.BarLeap != 0.70 || r.BarCoast != 0.70 || r.PlateauWindow != 4 || r.PlateauEps != 0.05 {
		t.Errorf("defaults: bar %v leap %v coast %v window %v eps %v", r.Bar, r.BarLeap, r.BarCoast, r.PlateauWindow, r.PlateauEps)
	}
	lat, look, feel := r.Dimensions[0], r.Dimensions[1], r.Dimensions[2]
	if lat.CaptureMethod != MethodCommand || lat.CaptureCommand.Shell != "sh capture.sh" || lat.Weight != 0.5 {
		t.Errorf("latency inherits the rubric's capture: %+v", lat)
	}
	if look.CaptureMethod != MethodScreenshot || strings.Join(look.CaptureCommand.Argv, " ") != "shot --full" {
		t.Errorf("look keeps its own capture: %+v", look)
	}
	if feel.Weight != 1 || feel.GameplayMetricsHash != "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789" {
		t.Errorf("feel: weight %v (default 1), hash %q (normalised)", feel.Weight, feel.GameplayMetricsHash)
	}
	if lat.Targets[0] != (Target{Metric: "p95_ms", Op: "<=", Value: 200}) {
		t.Errorf("target %+v", lat.Targets[0])
	}
	if !strings.Contains(string(look.Raw), `"screenshot"`) {
		t.Errorf("Raw keeps the dimension for the judge: %s", look.Raw)
	}

	plain := mustParse(t, `{"dimensions": [{"name": "a"}]}`)
	if plain.Dimensions[0].CaptureMethod != MethodScreenshot {
		t.Errorf("no capture_method anywhere: %q, want screenshot", plain.Dimensions[0].CaptureMethod)
	}
}

func Test5G_RubricBarsDefaultToBar(t *testing.T) {
	r := mustParse(t, `{"bar": 0.6, "dimensions": [{"name": "a"}]}`)
	if r.Bar != 0.6 || r.BarLeap != 0.6 || r.BarCoast != 0.6 {
		t.Errorf("bar 0.6: leap %v coast %v", r.BarLeap, r.BarCoast)
	}
	r = mustParse(t, `{"bar": 0.65, "bar_leap": 0.5, "bar_coast": 0.85, "plateau_window": 3, "plateau_eps": 0.02, "dimensions": [{"name": "a"}]}`)
	if r.Bar != 0.65 || r.BarLeap != 0.5 || r.BarCoast != 0.85 || r.PlateauWindow != 3 || r.PlateauEps != 0.02 {
		t.Errorf("explicit values: %+v", r)
	}
}

func Test5G_RubricAxesOrDimensions(t *testing.T) {
	r := mustParse(t, `{"axes": [{"name": "a"}, {"name": "b"}]}`)
	if len(r.Dimensions) != 2 || r.Dimensions[1].Path != "quality_rubric.axes[1]" {
		t.Errorf("axes: %+v", r.Dimensions)
	}
	r = mustParse(t, `{"dimensions": [], "axes": [{"name": "a"}]}`)
	if len(r.Dimensions) != 1 {
		t.Errorf("empty dimensions beside axes: %+v", r.Dimensions)
	}
	if r := mustParse(t, `{"dimensions": []}`); r.Active() {
		t.Error("an empty list turns the axis off")
	}
	if r, err := Parse(json.RawMessage(" null "), "quality_rubric"); r != nil || err != nil {
		t.Errorf("null rubric: %v %v", r, err)
	}
}

// Every hostile value is refused with the JSON path of the value.
func Test5G_RubricHostileValuesNamePath(t *testing.T) {
	many := func(n int, item string) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf(item, i)
		}
		return strings.Join(s, ",")
	}
	cases := []struct{ raw, want string }{
		{`[1]`, "quality_rubric: must be an object, not a list"},
		{`{"dimensions": [{"name":"a"},{"name":"b"},{"name":"c","targets":[{"metric":"x","op":"=~","value":1}]}]}`,
			`quality_rubric.dimensions[2].targets[0].op: "=~" is not one of`},
		{`{"dimensions": [{"name":"a","weight":"NaN"}]}`, "quality_rubric.dimensions[0].weight: must be a number, not a string"},
		{`{"dimensions": [{"name":"a","weight":1e999}]}`, "quality_rubric.dimensions[0].weight: number 1e999 is out of range"},
		{`{"dimensions": [{"name":"a","weight":-1}]}`, "quality_rubric.dimensions[0].weight: must be between 0 and 1000"},
		{`{"bar": 2, "dimensions": [{"name":"a"}]}`, "quality_rubric.bar: must be between 0 and 1, not 2"},
		{`{"bar_coast": true, "dimensions": [{"name":"a"}]}`, "quality_rubric.bar_coast: must be a number, not a boolean"},
		{`{"bar_leap": 0.9, "bar_coast": 0.8, "dimensions": [{"name":"a"}]}`, "quality_rubric.bar_leap: 0.9 is above bar_coast 0.8"},
		{`{"plateau_window": 2.5, "dimensions": [{"name":"a"}]}`, "quality_rubric.plateau_window: must be a whole number"},
		{`{"plateau_window": 1000000, "dimensions": [{"name":"a"}]}`, "quality_rubric.plateau_window: must be between 1 and 100"},
		{`{"plateau_eps": "0.05", "dimensions": [{"name":"a"}]}`, "quality_rubric.plateau_eps: must be a number, not a string"},
		{`{"dimensions": {"a": {}}}`, "quality_rubric.dimensions: must be a list of dimensions, not an object"},
		{`{"dimensions": [` + many(65, `{"name":"d%d"}`) + `]}`, "quality_rubric.dimensions: has 65 dimensions, more than 64"},
		{`{"dimensions": [{"name":"a","capture_method":"command","targets":[` + many(65, `{"metric":"m%d","op":"<","value":1}`) + `]}]}`,
			"quality_rubric.dimensions[0].targets: has 65 targets, more than 64"},
		{`{"dimensions": [{"name":"../../etc"}]}`, `quality_rubric.dimensions[0].name: "../../etc" must be`},
		{`{"dimensions": [{"name":"a\nb"}]}`, `quality_rubric.dimensions[0].name: "a\nb" must be`},
		{`{"dimensions": [{}]}`, "quality_rubric.dimensions[0].name: must be a string, not null"},
		{`{"dimensions": [{"name":"a"},{"name":"a"}]}`, `quality_rubric.dimensions[1].name: "a" is also the name of quality_rubric.dimensions[0]`},
		{`{"dimensions": [{"name":"a","capture_method":"telepathy"}]}`, `quality_rubric.dimensions[0].capture_method: "telepathy" is not a capture method`},
		{`{"capture_method": 3, "dimensions": [{"name":"a"}]}`, "quality_rubric.capture_method: must be a string, not a number"},
		{`{"dimensions": [{"name":"a","capture_method":"command","targets":[{"metric":"x","op":"<","value":"200"}]}]}`,
			"quality_rubric.dimensions[0].targets[0].value: must be a number, not a string"},
		{`{"dimensions": [{"name":"a","capture_method":"command","targets":[{"metric":"","op":"<","value":1}]}]}`,
			"quality_rubric.dimensions[0].targets[0].metric: is empty"},
		{`{"dimensions": [{"name":"a","capture_method":"command","targets":[7]}]}`, "quality_rubric.dimensions[0].targets[0]: must be an object"},
		{`{"dimensions": [{"name":"a","capture_method":"command","targets":{"metric":"x"}}]}`, "quality_rubric.dimensions[0].targets: must be a list"},
		{`{"dimensions": [{"name":"a","targets":[{"metric":"x","op":"<","value":1}]}]}`, "quality_rubric.dimensions[0].targets: a screenshot dimension is graded by the judge"},
		{`{"dimensions": [{"name":"a","gameplay_metrics_hash":"abc"}]}`, `quality_rubric.dimensions[0].gameplay_metrics_hash: must be a SHA-256 in hex (64 digits), not "abc"`},
		{`{"dimensions": [{"name":"a","asset_sources":[1]}]}`, "quality_rubric.dimensions[0].asset_sources[0]: must be a string, not a number"},
		{`{"dimensions": [{"name":"a","techniques":[` + many(257, `"t%d"`) + `]}]}`, "quality_rubric.dimensions[0].techniques: has 257 entries, more than 256"},
		{`{"dimensions": [{"name":"a","capture_command":5}]}`, "quality_rubric.dimensions[0].capture_command: must be a string or a list of strings, not a number"},
		{`{"dimensions": [{"name":"a","capture_command":["", "x"]}]}`, "quality_rubric.dimensions[0].capture_command[0]: the program name is empty"},
		{`{"dimensions": [{"name":"a","capture_command":"` + strings.Repeat("x", 9000) + `"}]}`, "quality_rubric.dimensions[0].capture_command: is 9000 bytes long"},
		{`{"dimensions": [{"name":"a","ceiling_without_assets":-1}]}`, "quality_rubric.dimensions[0].ceiling_without_assets: must be between 0 and 1"},
		{`{"dimensions": [{"name":"a","weight":0},{"name":"b","weight":0}]}`, "quality_rubric.dimensions: no dimension has a positive weight"},
		{`{"dimensions": [{"name":"a"}], "axes": [{"name":"b"}]}`, "quality_rubric.axes: both dimensions and axes list dimensions"},
		{`{"dimensions": [{"name":"a"}]} {}`, "quality_rubric: is not valid JSON"},
	}
	for _, c := range cases {
		r, err := Parse(json.RawMessage(c.raw), "quality_rubric")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			short := c.raw
			if len(short) > 80 {
				short = short[:80] + "…"
			}
			t.Errorf("Parse(%s):\n got %v\nwant an error containing %q", short, err, c.want)
		}
		if r != nil {
			t.Errorf("Parse(%.40s) returned a rubric with its error", c.raw)
		}
	}
}

func Test5G_RubricErrorsAreAllReportedButCapped(t *testing.T) {
	var dims []string
	for i := 0; i < 40; i++ {
		dims = append(dims, fmt.Sprintf(`{"name":"d%d","weight":"x"}`, i))
	}
	_, err := Parse(json.RawMessage(`{"dimensions":[`+strings.Join(dims, ",")+`]}`), "domains.build.quality_rubric")
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxErrors || !strings.HasPrefix(lines[1], "domains.build.quality_rubric.dimensions[1].weight:") {
		t.Errorf("%d errors, second %q", len(lines), lines[1])
	}
}

func Test5G_SelectDomainElseTopLevel(t *testing.T) {
	top := json.RawMessage(`{"dimensions":[{"name":"t"}]}`)
	dom := json.RawMessage(`{"dimensions":[{"name":"d"}]}`)
	if raw, p := Select("build", dom, top); string(raw) != string(dom) || p != "domains.build.quality_rubric" {
		t.Errorf("domain's rubric: %s at %s", raw, p)
	}
	if raw, p := Select("build", json.RawMessage("null"), top); string(raw) != string(top) || p != "quality_rubric" {
		t.Errorf("top-level fallback: %s at %s", raw, p)
	}
	if raw, p := Select("build", nil, nil); raw != nil || p != "" {
		t.Errorf("none: %s at %s", raw, p)
	}
}

func TestTargetOps(t *testing.T) {
	cases := []struct {
		op     string
		actual float64
		want   bool
	}{
		{"<", 199, true}, {"<", 200, false}, {"<=", 200, true}, {"<=", 201, false},
		{">", 201, true}, {">", 200, false}, {">=", 200, true}, {">=", 199, false},
		{"==", 200, true}, {"==", 200.5, false}, {"!=", 200.5, true}, {"!=", 200, false},
		{"~", 200, false},
	}
	for _, c := range cases {
		if got := (Target{Metric: "m", Op: c.op, Value: 200}).Met(c.actual); got != c.want {
			t.Errorf("%v %s 200 = %v, want %v", c.actual, c.op, got, c.want)
		}
	}
}

func TestShellWords(t *testing.T) {
	cases := map[string][]string{
		`node tools/h.mjs --x`:         {"node", "tools/h.mjs", "--x"},
		`sh -c 'python3 tools/x.py'`:   {"sh", "-c", "python3 tools/x.py"},
		`a "b c" d\ e`:                 {"a", "b c", "d e"},
		`"x\"y" ''`:                    {`x"y`, ""},
		"  spaced\targs\n":             {"spaced", "args"},
		`unterminated 'quote and more`: {"unterminated", "quote and more"},
	}
	for in, want := range cases {
		if got := shellWords(in); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("shellWords(%q) = %q, want %q", in, got, want)
		}
	}
}
