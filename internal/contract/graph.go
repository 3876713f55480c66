package contract

import (
	"sort"

	"github.com/ooda-loop/ooda/internal/config"
)

// ChainCycles returns every circular chain among the given contracts (keyed
// by skill name), each as the path that closes the loop, e.g. [/a /b /a].
// A circular chain is rejected at validation: at run time the engine also
// never runs a skill twice in one cycle, but a loop in the graph is a
// configuration mistake worth naming.
func ChainCycles(contracts map[string]Contract) [][]string {
	graph := map[string][]string{}
	for name, c := range contracts {
		from := "/" + config.SkillKey(name)
		for _, t := range c.ChainTriggers {
			graph[from] = append(graph[from], "/"+config.SkillKey(t.Target))
		}
	}
	nodes := make([]string, 0, len(graph))
	for n := range graph {
		sort.Strings(graph[n])
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var out [][]string
	seen := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range graph[n] {
			switch color[m] {
			case white:
				visit(m)
			case grey:
				i := len(stack) - 1
				for stack[i] != m {
					i--
				}
				cyc := append(append([]string{}, stack[i:]...), m)
				key := canonical(cyc[:len(cyc)-1])
				if !seen[key] {
					seen[key] = true
					out = append(out, cyc)
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, n := range nodes {
		if color[n] == white {
			visit(n)
		}
	}
	return out
}

// canonical names a cycle independently of where it was entered.
func canonical(c []string) string {
	best := ""
	for i := range c {
		s := ""
		for j := range c {
			s += c[(i+j)%len(c)] + ">"
		}
		if best == "" || s < best {
			best = s
		}
	}
	return best
}
