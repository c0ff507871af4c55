package bench

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

// shipped holds the workloads that come with the suite, so the binary can
// run them by name from anywhere.
//
//go:embed workloads/*.json
var shipped embed.FS

// ShippedWorkloads returns the workloads under workloads/, by name.
func ShippedWorkloads() ([]Workload, error) {
	entries, err := shipped.ReadDir("workloads")
	if err != nil {
		return nil, err
	}
	var out []Workload
	for _, e := range entries {
		data, err := shipped.ReadFile(path.Join("workloads", e.Name()))
		if err != nil {
			return nil, err
		}
		w, err := ParseWorkload(data)
		if err != nil {
			return nil, fmt.Errorf("shipped workload %s: %w", e.Name(), err)
		}
		if w.Name != strings.TrimSuffix(e.Name(), ".json") {
			return nil, fmt.Errorf("shipped workload %s is named %q", e.Name(), w.Name)
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ResolveWorkloads turns command-line arguments into workloads: a path to a
// JSON file, the name of a shipped workload, or "all" for every shipped one.
func ResolveWorkloads(args []string) ([]Workload, error) {
	var all []Workload
	var out []Workload
	for _, a := range args {
		if strings.HasSuffix(a, ".json") || strings.ContainsRune(a, '/') {
			w, err := LoadWorkload(a)
			if err != nil {
				return nil, err
			}
			out = append(out, w)
			continue
		}
		if all == nil {
			var err error
			if all, err = ShippedWorkloads(); err != nil {
				return nil, err
			}
		}
		if a == "all" {
			out = append(out, all...)
			continue
		}
		found := false
		for _, w := range all {
			if w.Name == a {
				out, found = append(out, w), true
			}
		}
		if !found {
			names := make([]string, len(all))
			for i, w := range all {
				names[i] = w.Name
			}
			return nil, fmt.Errorf("workload %q: not a .json file nor a shipped workload (%s)", a, strings.Join(names, ", "))
		}
	}
	return out, nil
}
