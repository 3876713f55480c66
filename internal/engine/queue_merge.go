package engine

import (
	"bytes"
	"encoding/json"

	"github.com/ooda-loop/ooda/internal/state"
)

// A skill may update action_queue.json itself while it runs (dev-cycle
// moves the action it took to in_progress with its PR). The cycle holds
// the queue in memory from its start and writes it at its end, so without
// this the skill's update would be overwritten by the cycle's copy.

// queueFile is action_queue.json as it is on disk, nil when it cannot be
// read (then nothing is merged: the cycle's copy stands, as before).
func (c *cycle) queueFile() []byte {
	b, err := c.store.RawEvolveFile(state.ActionQueueFile)
	if err != nil || b == nil {
		return nil
	}
	return b
}

// takeSkillQueue merges into the cycle's queue what the skill changed in
// action_queue.json between before (the file as it was when the skill
// started) and now.
func (c *cycle) takeSkillQueue(skill string, before []byte) {
	if before == nil {
		return
	}
	after := c.queueFile()
	if after == nil || bytes.Equal(before, after) {
		return
	}
	var base state.ActionQueue
	if json.Unmarshal(before, &base) != nil {
		return
	}
	snap, err := c.store.LoadFiles(state.ActionQueueFile)
	if err != nil || snap == nil || len(snap.Corrupt) > 0 {
		c.printf("[WARN] %s changed %s, but it does not read back: the cycle keeps its own copy.", skill, state.ActionQueueFile)
		return
	}
	merged, n := mergeSkillQueue(c.snap.ActionQueue, base, snap.ActionQueue)
	if n > 0 {
		c.snap.ActionQueue = merged
		c.printf("[Act] %s updated %d action(s) in %s.", skill, n, state.ActionQueueFile)
	}
}

type queuePlace struct {
	list int // 0 pending, 1 in_progress, 2 completed
	item state.Action
	raw  []byte
}

func queuePlaces(q state.ActionQueue) map[string]queuePlace {
	m := map[string]queuePlace{}
	for li, list := range [][]state.Action{q.Pending, q.InProgress, q.Completed} {
		for _, a := range list {
			if a.ID == "" {
				continue
			}
			raw, _ := json.Marshal(a)
			m[a.ID] = queuePlace{list: li, item: a, raw: raw}
		}
	}
	return m
}

// mergeSkillQueue applies to ours each item the skill changed between
// base and theirs: an item whose list or content differs is taken as the
// skill left it (moved, changed, added), an item the skill removed is
// removed; every other item stays as ours has it (the cycle may have
// moved some in memory already, as Orient does for a merged PR's action).
// Items without an id cannot be matched and stay as ours has them.
func mergeSkillQueue(ours, base, theirs state.ActionQueue) (state.ActionQueue, int) {
	b, t := queuePlaces(base), queuePlaces(theirs)
	changed := map[string]*queuePlace{}
	for id, tp := range t {
		if bp, ok := b[id]; !ok || bp.list != tp.list || !bytes.Equal(bp.raw, tp.raw) {
			tp := tp
			changed[id] = &tp
		}
	}
	for id := range b {
		if _, ok := t[id]; !ok {
			changed[id] = nil
		}
	}
	if len(changed) == 0 {
		return ours, 0
	}
	out := ours
	lists := [3][]state.Action{}
	for li, list := range [][]state.Action{ours.Pending, ours.InProgress, ours.Completed} {
		for _, a := range list {
			if _, ok := changed[a.ID]; ok && a.ID != "" {
				continue
			}
			lists[li] = append(lists[li], a)
		}
	}
	// In theirs' order, so the skill's placement is kept.
	for li, list := range [][]state.Action{theirs.Pending, theirs.InProgress, theirs.Completed} {
		for _, a := range list {
			if p := changed[a.ID]; p != nil && p.list == li {
				lists[li] = append(lists[li], p.item)
			}
		}
	}
	out.Pending, out.InProgress, out.Completed = lists[0], lists[1], lists[2]
	return out, len(changed)
}
