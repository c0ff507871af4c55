package api

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kversion"
)

// apiRow is one row of docs/API.md's table.
type apiRow struct {
	key                   int16
	name, kafka43, served string
	strict, notes         string
}

// readAPITable reads the table of docs/API.md.
func readAPITable(t *testing.T) map[int16]apiRow {
	t.Helper()
	f, err := os.Open("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[int16]apiRow{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) != 8 || cells[0] != "" || cells[7] != "" {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		key, err := strconv.ParseInt(cells[1], 10, 16)
		if err != nil {
			continue // the header
		}
		if _, dup := rows[int16(key)]; dup {
			t.Fatalf("docs/API.md: key %d twice", key)
		}
		rows[int16(key)] = apiRow{int16(key), cells[2], cells[3], cells[4], cells[5], cells[6]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

var versionRange = regexp.MustCompile(`^(\d+)(?:-(\d+))?$`)

// parseRange reads "a-b" or "a"; ok is false for anything else ("—").
func parseRange(s string) (lo, hi int16, ok bool) {
	m := versionRange.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	l, _ := strconv.Atoi(m[1])
	h := l
	if m[2] != "" {
		h, _ = strconv.Atoi(m[2])
	}
	return int16(l), int16(h), true
}

// docs/API.md lists every Kafka 4.3 key, with exactly the versions the
// handlers serve with and without legacy versions, and a reason for each
// key not served; Kafka 4.3's maxima in it are franz-go's kversion ones,
// and kzero serves each served key up to Kafka 4.3's maximum.
func TestAPITable(t *testing.T) {
	rows := readAPITable(t)
	for key := int16(0); key <= 92; key++ {
		if _, ok := rows[key]; !ok && (key < 4 || key > 7) {
			t.Errorf("docs/API.md has no row for key %d", key)
		}
	}
	legacy := &Handler{cfg: Config{LegacyVersions: true}}
	strict := &Handler{cfg: Config{LegacyVersions: false}}
	for key, a := range apis {
		if _, ok := rows[key]; !ok {
			t.Errorf("key %d is served but not in docs/API.md", key)
		}
		lo, hi, _ := legacy.versions(a)
		slo, shi, _ := strict.versions(a)
		row := rows[key]
		if got := fmt.Sprintf("%d-%d", lo, hi); row.served != got && !(lo == hi && row.served == strconv.Itoa(int(lo))) {
			t.Errorf("key %d (%s): docs/API.md says kzero serves %q, the handler %s", key, row.name, row.served, got)
		}
		if got := fmt.Sprintf("%d-%d", slo, shi); row.strict != got && !(slo == shi && row.strict == strconv.Itoa(int(slo))) {
			t.Errorf("key %d (%s): docs/API.md says kzero strict serves %q, the handler %s", key, row.name, row.strict, got)
		}
	}
	v43 := kversion.V4_3_0()
	for key, row := range rows {
		klo, khi, ok := parseRange(row.kafka43)
		if !ok {
			t.Errorf("key %d: Kafka 4.3 versions %q", key, row.kafka43)
			continue
		}
		if max, ok := v43.LookupMaxKeyVersion(key); ok && max != khi {
			t.Errorf("key %d (%s): docs/API.md says Kafka 4.3 goes to v%d, kversion v%d", key, row.name, khi, max)
		}
		a, served := apis[key]
		if !served {
			if row.served != "—" || row.strict != "—" || row.notes == "" {
				t.Errorf("key %d (%s) is not served: want — in both kzero columns and a reason", key, row.name)
			}
			continue
		}
		if a.max != khi {
			t.Errorf("key %d (%s): kzero serves up to v%d, Kafka 4.3 v%d", key, row.name, a.max, khi)
		}
		if slo, _, _ := strict.versions(a); slo != klo {
			t.Errorf("key %d (%s): strict minimum v%d, Kafka 4.3's v%d", key, row.name, slo, klo)
		}
	}
}
