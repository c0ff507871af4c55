package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ResetKind is where `group reset-offsets` moves a group's offsets, one of
// kafka-consumer-groups.sh's --to-* and --shift-by/--by-duration options.
type ResetKind int

const (
	ResetToEarliest ResetKind = iota + 1 // the log start offset
	ResetToLatest                        // the log end offset
	ResetToOffset                        // ResetTarget.Offset
	ResetShiftBy                         // the committed offset plus ResetTarget.Offset
	ResetToDatetime                      // the first offset at or after ResetTarget.Time
	ResetByDuration                      // the first offset at or after ResetTarget.Duration ago
)

// ResetTarget is a ResetKind with its argument. An offset it names outside
// a partition's log is moved to the nearer end of the log, as Kafka's
// tool does; a time after the last record is the log end offset.
type ResetTarget struct {
	Kind     ResetKind
	Offset   int64         // ResetToOffset: the offset; ResetShiftBy: the shift (negative goes back)
	Time     time.Time     // ResetToDatetime
	Duration time.Duration // ResetByDuration, > 0
}

// ResetOptions says which offsets of a group `group reset-offsets` moves,
// and whether it commits them or only prints the plan.
type ResetOptions struct {
	Group string
	// Topics are --topic values, "T" (every partition) or "T:0,1"; or
	// AllTopics, every topic the group has committed offsets for.
	Topics    []string
	AllTopics bool
	To        ResetTarget
	// Execute commits the new offsets; without it the plan is printed
	// and nothing changes (a dry run).
	Execute bool
}

// resetRow is one partition of the plan, in `reset-offsets -o json`.
type resetRow struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	NewOffset     int64  `json:"new_offset"`
	Error         string `json:"error,omitempty"`
}

// resetPlan is `reset-offsets -o json`.
type resetPlan struct {
	Group      string     `json:"group"`
	Executed   bool       `json:"executed"`
	Partitions []resetRow `json:"partitions"`
}

// resetChunk is how many partitions one OffsetCommit carries; the
// progress bar moves once per chunk.
const resetChunk = 500

// GroupResetOffsets computes new committed offsets for a group's
// partitions and, with opts.Execute, commits them. As kafka-consumer-groups
// does, it refuses a group that has members (NON_EMPTY_GROUP), dry run or
// not: offsets can only be reset while the group's consumers are stopped.
// If the new offset of any partition cannot be worked out (--shift-by with
// no committed offset, a topic that does not exist), nothing is committed.
// A share group's offsets are its share-partition start offsets, read with
// DescribeShareGroupOffsets and set with AlterShareGroupOffsets.
func GroupResetOffsets(ctx context.Context, env *Env, opts ResetOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	specs, err := parseTopicSpecs(opts.Topics)
	if err != nil {
		return err
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	what := "reset offsets of group " + opts.Group

	share, err := checkInactive(ctx, adm, opts.Group, what)
	if err != nil {
		return err
	}
	var committed map[kadm.Partition]int64
	if share {
		committed, err = shareStartOffsets(ctx, adm, opts.Group, what)
	} else {
		committed, err = committedOffsets(ctx, adm, opts.Group, what)
	}
	if err != nil {
		return err
	}

	set := kadm.TopicsSet{}
	if opts.AllTopics {
		for tp := range committed {
			set.Add(tp.Topic, tp.Partition)
		}
	} else {
		ends, err := adm.ListEndOffsets(ctx, specs.names()...)
		if err != nil {
			return deadline(ctx, what+": list partitions", err)
		}
		if set, err = specs.resolve(ends, what); err != nil {
			return err
		}
	}

	rows, err := planReset(ctx, adm, opts.To, set, committed, what)
	if err != nil {
		return err
	}
	if opts.Execute {
		if err := commitReset(ctx, env, adm, opts.Group, share, rows, what); err != nil {
			return err
		}
	}
	return printReset(env, opts, rows)
}

func (o *ResetOptions) check() error {
	switch {
	case o.Group == "":
		return usagef("group reset-offsets: no group name")
	case (len(o.Topics) > 0) == o.AllTopics:
		return usagef("group reset-offsets: give --topic or --all-topics")
	case o.To.Kind < ResetToEarliest || o.To.Kind > ResetByDuration:
		return usagef("group reset-offsets: give one of --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by and --by-duration")
	case o.To.Kind == ResetToOffset && o.To.Offset < 0:
		return usagef("group reset-offsets: --to-offset %d is negative", o.To.Offset)
	case o.To.Kind == ResetByDuration && o.To.Duration <= 0:
		return usagef("group reset-offsets: --by-duration must be above zero")
	}
	return nil
}

// checkInactive fails unless the group is Empty or does not exist yet: a
// commit for a group with members would be refused (or, worse, race their
// own commits). share says it is a share group.
func checkInactive(ctx context.Context, adm *kadm.Client, group, what string) (share bool, err error) {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return false, deadline(ctx, what+": describe group", err)
	}
	g, ok := described[group]
	switch {
	case !ok:
		return false, fmt.Errorf("%s: no answer from its coordinator", what)
	case errors.Is(g.Err, kerr.GroupIDNotFound):
		// Not a classic or consumer group: maybe a share group; else
		// the commit creates it.
		state, members, found, err := shareGroupState(ctx, adm, group)
		switch {
		case err != nil:
			return false, fmt.Errorf("%s: %w", what, err)
		case !found || state == "Empty":
			return found, nil
		}
		g.State, g.Members = state, make([]kadm.DescribedGroupMember, members)
		share = true
	case g.Err != nil:
		return false, fmt.Errorf("%s: %w", what, kafkaErr(g.Err, g.ErrMessage))
	case g.State == "Empty" || g.State == "Dead":
		return false, nil
	}
	return share, fmt.Errorf("%s: %w", what, kafkaErr(kerr.NonEmptyGroup,
		fmt.Sprintf("the group is %s with %d members; offsets can only be reset while it is inactive", g.State, len(g.Members))))
}

// committedOffsets are a group's committed offsets.
func committedOffsets(ctx context.Context, adm *kadm.Client, group, what string) (map[kadm.Partition]int64, error) {
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, deadline(ctx, what+": fetch offsets", err)
	}
	committed := map[kadm.Partition]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			committed[kadm.Partition{Topic: o.Topic, Partition: o.Partition}] = o.At
		}
	})
	return committed, nil
}

// planReset works out the new offset of each partition in set.
func planReset(ctx context.Context, adm *kadm.Client, to ResetTarget, set kadm.TopicsSet, committed map[kadm.Partition]int64, what string) ([]resetRow, error) {
	topics := set.Topics()
	if len(topics) == 0 {
		return nil, nil
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, deadline(ctx, what+": list start offsets", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, deadline(ctx, what+": list end offsets", err)
	}
	var byTime kadm.ListedOffsets
	if to.Kind == ResetToDatetime || to.Kind == ResetByDuration {
		at := to.Time
		if to.Kind == ResetByDuration {
			at = time.Now().Add(-to.Duration)
		}
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topics...); err != nil {
			return nil, deadline(ctx, what+": list offsets by time", err)
		}
	}

	var rows []resetRow
	var errs []error
	for _, tp := range set.Sorted() {
		for _, p := range tp.Partitions {
			key := kadm.Partition{Topic: tp.Topic, Partition: p}
			row := resetRow{Topic: tp.Topic, Partition: p}
			if cur, ok := committed[key]; ok {
				row.CurrentOffset = &cur
			}
			start, serr := listedAt(starts, key)
			end, eerr := listedAt(ends, key)
			if err := errors.Join(serr, eerr); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s partition %d: %w", what, tp.Topic, p, err))
				continue
			}
			var next int64
			switch to.Kind {
			case ResetToEarliest:
				next = start
			case ResetToLatest:
				next = end
			case ResetToOffset:
				next = to.Offset
			case ResetShiftBy:
				if row.CurrentOffset == nil {
					errs = append(errs, fmt.Errorf("%s: %s partition %d: no committed offset to shift", what, tp.Topic, p))
					continue
				}
				next = *row.CurrentOffset + to.Offset
			case ResetToDatetime, ResetByDuration:
				at, err := listedAt(byTime, key)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %s partition %d: %w", what, tp.Topic, p, err))
					continue
				}
				next = at
				if next < 0 { // no record at or after the time
					next = end
				}
			}
			row.NewOffset = min(max(next, start), end)
			rows = append(rows, row)
		}
	}
	return rows, errors.Join(errs...)
}

// listedAt is a partition's listed offset, or why there is none.
func listedAt(l kadm.ListedOffsets, tp kadm.Partition) (int64, error) {
	if t, ok := l.Lookup(tp.Topic, -1); ok && t.Err != nil {
		return 0, t.Err // the topic could not be listed
	}
	o, ok := l.Lookup(tp.Topic, tp.Partition)
	switch {
	case !ok:
		return 0, errors.New("no offset listed")
	case o.Err != nil:
		return 0, o.Err
	}
	return o.Offset, nil
}

// commitReset commits the plan in chunks, moving a progress bar; failed
// partitions are marked in their rows and returned joined.
func commitReset(ctx context.Context, env *Env, adm *kadm.Client, group string, share bool, rows []resetRow, what string) error {
	bar := env.progress("reset-offsets "+group, int64(len(rows)), "partitions", false)
	defer bar.finish()
	var errs []error
	for lo := 0; lo < len(rows); lo += resetChunk {
		chunk := rows[lo:min(lo+resetChunk, len(rows))]
		offsets := kadm.Offsets{}
		for _, r := range chunk {
			offsets.Add(kadm.Offset{Topic: r.Topic, Partition: r.Partition, At: r.NewOffset, LeaderEpoch: -1})
		}
		var lookup func(topic string, p int32) (error, bool)
		if share {
			resps, err := adm.AlterShareGroupOffsets(ctx, group, offsets)
			if err != nil {
				return deadline(ctx, what+": alter share group offsets", err)
			}
			lookup = resps.Lookup
		} else {
			resps, err := adm.CommitOffsets(ctx, group, offsets)
			if err != nil {
				return deadline(ctx, what+": commit", err)
			}
			lookup = func(topic string, p int32) (error, bool) {
				r, ok := resps.Lookup(topic, p)
				return r.Err, ok
			}
		}
		for i := range chunk {
			r := &chunk[i]
			perr, ok := lookup(r.Topic, r.Partition)
			if !ok {
				perr = errors.New("no answer from the group's coordinator")
			}
			if perr != nil {
				errs = append(errs, fmt.Errorf("%s: %s partition %d: %w", what, r.Topic, r.Partition, perr))
				r.Error = oneLine(perr.Error())
			}
		}
		bar.add(int64(len(chunk)))
	}
	return errors.Join(errs...)
}

func printReset(env *Env, opts ResetOptions, rows []resetRow) error {
	if env.Format == JSON {
		if rows == nil {
			rows = []resetRow{}
		}
		return writeJSON(env.Out, resetPlan{Group: opts.Group, Executed: opts.Execute, Partitions: rows})
	}
	t := newTable(env.Out, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET")
	for _, r := range rows {
		t.row(opts.Group, r.Topic, r.Partition, optInt(r.CurrentOffset), r.NewOffset)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if !opts.Execute {
		_, err := fmt.Fprintln(env.Out, "\nDry run: no offsets changed; add --execute to commit them.")
		return err
	}
	return nil
}

// ParseResetDatetime reads --to-datetime: RFC 3339 (2024-05-01T10:00:00Z,
// fractions and offsets allowed), or the same without a zone
// (2024-05-01T10:00:00.000, as Kafka's tool takes it), read as local time.
func ParseResetDatetime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("datetime %q: want RFC 3339, such as 2024-05-01T10:00:00Z", s)
}

// isoDuration is the ISO 8601 duration Kafka's --by-duration takes:
// PnDTnHnMn.nS, each part optional.
var isoDuration = regexp.MustCompile(`^[Pp](?:(\d+)[Dd])?(?:[Tt](?:(\d+)[Hh])?(?:(\d+)[Mm])?(?:(\d+(?:\.\d+)?)[Ss])?)?$`)

// ParseResetDuration reads --by-duration: a Go duration (90m, 1h30m) or,
// as Kafka's tool takes it, ISO 8601 (PT1H30M, P1DT12H). It must be above
// zero.
func ParseResetDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		m := isoDuration.FindStringSubmatch(s)
		if m == nil || strings.EqualFold(s, "P") || strings.EqualFold(s, "PT") {
			return 0, usagef("duration %q: want a duration such as 1h30m or PT1H30M", s)
		}
		d = 0
		for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
			if m[i+1] == "" {
				continue
			}
			f, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				return 0, usagef("duration %q: %v", s, err)
			}
			d += time.Duration(f * float64(unit))
		}
	}
	if d <= 0 {
		return 0, usagef("duration %q: must be above zero", s)
	}
	return d, nil
}
