package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// RESULTS.md and results.svg are made from results.json alone: rendered
// again from the committed results.json, they are the committed bytes.
// After a change to the report's text, `go run . -from results.json` (in
// bench/) writes them again.
func TestResultsFromJSON(t *testing.T) {
	data, err := os.ReadFile("results.json")
	if err != nil {
		t.Fatal(err)
	}
	res := &Results{}
	if err := json.Unmarshal(data, res); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(js, '\n'), data) {
		t.Error("results.json does not read back to the same bytes")
	}
	rep := newReport(res)
	md, err := rep.markdown()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, got string }{{"RESULTS.md", md}, {"results.svg", rep.svg()}} {
		want, err := os.ReadFile(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if f.got != string(want) {
			t.Errorf("%s rendered from results.json differs from the committed one at line %d (`go run . -from results.json` in bench/ writes it)",
				f.name, firstDiffLine(f.got, string(want)))
		}
	}
}

// firstDiffLine is the first line, from 1, where a and b differ.
func firstDiffLine(a, b string) int {
	line := 1
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return line
		}
		if a[i] == '\n' {
			line++
		}
	}
	return line
}

// A run that measured little, or nothing, still renders: every template
// runs over what a figure leaves out.
func TestReportOfLittle(t *testing.T) {
	for _, res := range []*Results{
		{},
		{Settings: settings{Quick: true, Only: []string{"package"}}, Notes: map[string][]string{"package": {"**Not measured**: no dh."}},
			Reload: ReloadResults{Bm2Check: "bm2 reload: not found"}},
	} {
		md, err := newReport(res).markdown()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix([]byte(md), []byte("# bm2 vs PM2: benchmark results\n\n")) || bytes.Contains([]byte(md), []byte("<no value>")) {
			t.Errorf("report:\n%s", md)
		}
	}
}
