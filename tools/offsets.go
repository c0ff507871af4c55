package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// OffsetsOptions says which offsets `kzctl offsets` lists.
type OffsetsOptions struct {
	Topics []string // empty: every topic
	// Time is "" for the start and end offsets of each partition, else
	// what kafka-get-offsets --time takes: earliest (-2), latest (-1),
	// max-timestamp (-3) or a millisecond timestamp, whose offset is the
	// first record at or after it (the end offset when there is none).
	Time string
	// Isolation read_committed lists the last stable offset as the end.
	Isolation string
}

// Special timestamps of ListOffsets.
const (
	timeLatest       = -1
	timeEarliest     = -2
	timeMaxTimestamp = -3
)

func parseTime(s string) (int64, error) {
	switch strings.ToLower(s) {
	case "latest":
		return timeLatest, nil
	case "earliest":
		return timeEarliest, nil
	case "max-timestamp":
		return timeMaxTimestamp, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < timeMaxTimestamp {
		return 0, usagef("time %q: want earliest, latest, max-timestamp or a millisecond timestamp", s)
	}
	return n, nil
}

// partitionOffsets is one partition in `offsets -o json`.
type partitionOffsets struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Start     *int64 `json:"start,omitempty"`
	End       *int64 `json:"end,omitempty"`
	Offset    *int64 `json:"offset,omitempty"`
	Timestamp *int64 `json:"timestamp,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Offsets lists partition offsets: start and end, or the offset for a time.
func Offsets(ctx context.Context, env *Env, opts OffsetsOptions) error {
	committed, err := (&ConsumeOptions{Isolation: opts.Isolation}).readCommitted()
	if err != nil {
		return err
	}
	var ts int64
	if opts.Time != "" {
		if ts, err = parseTime(opts.Time); err != nil {
			return err
		}
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()

	end := adm.ListEndOffsets
	if committed {
		end = adm.ListCommittedOffsets
	}
	var rows []partitionOffsets
	var errs []error
	if opts.Time == "" {
		starts, err := adm.ListStartOffsets(ctx, opts.Topics...)
		if err != nil {
			return deadline(ctx, "list start offsets", err)
		}
		ends, err := end(ctx, opts.Topics...)
		if err != nil {
			return deadline(ctx, "list end offsets", err)
		}
		rows, errs = offsetRows(starts, func(r *partitionOffsets, l kadm.ListedOffset) {
			r.Start = &l.Offset
			if e, ok := ends.Lookup(l.Topic, l.Partition); ok && e.Err == nil {
				r.End = &e.Offset
			} else if ok {
				r.Error = e.Err.Error()
			}
		})
	} else {
		var listed kadm.ListedOffsets
		switch ts {
		case timeLatest:
			listed, err = end(ctx, opts.Topics...)
		case timeEarliest:
			listed, err = adm.ListStartOffsets(ctx, opts.Topics...)
		case timeMaxTimestamp:
			listed, err = adm.ListMaxTimestampOffsets(ctx, opts.Topics...)
		default:
			listed, err = adm.ListOffsetsAfterMilli(ctx, ts, opts.Topics...)
		}
		if err != nil {
			return deadline(ctx, "list offsets", err)
		}
		rows, errs = offsetRows(listed, func(r *partitionOffsets, l kadm.ListedOffset) {
			r.Offset, r.Timestamp = &l.Offset, &l.Timestamp
		})
	}
	for _, r := range rows {
		if r.Error != "" {
			errs = append(errs, fmt.Errorf("offsets of %s partition %d: %s", r.Topic, r.Partition, r.Error))
		}
	}

	if env.Format == JSON {
		if rows == nil {
			rows = []partitionOffsets{}
		}
		if err := writeJSON(env.Out, rows); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	var t *table
	if opts.Time == "" {
		t = newTable(env.Out, "TOPIC", "PARTITION", "START", "END")
	} else {
		t = newTable(env.Out, "TOPIC", "PARTITION", "OFFSET", "TIMESTAMP")
	}
	for _, r := range rows {
		if r.Error != "" {
			continue
		}
		if opts.Time == "" {
			t.row(r.Topic, r.Partition, *r.Start, *r.End)
		} else {
			t.row(r.Topic, r.Partition, *r.Offset, *r.Timestamp)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// offsetRows turns listed offsets into rows sorted by topic and partition,
// filled by fill, and returns the errors of topics that could not be listed.
func offsetRows(listed kadm.ListedOffsets, fill func(*partitionOffsets, kadm.ListedOffset)) ([]partitionOffsets, []error) {
	var rows []partitionOffsets
	var errs []error
	for _, topic := range sortedKeys(listed) {
		ps := listed[topic]
		if l, ok := ps[-1]; ok && l.Err != nil {
			errs = append(errs, fmt.Errorf("offsets of %s: %w", topic, l.Err))
			continue
		}
		parts := make([]int32, 0, len(ps))
		for p := range ps {
			parts = append(parts, p)
		}
		slices.Sort(parts)
		for _, p := range parts {
			l := ps[p]
			r := partitionOffsets{Topic: topic, Partition: p}
			if l.Err != nil {
				r.Error = l.Err.Error()
			} else {
				fill(&r, l)
			}
			rows = append(rows, r)
		}
	}
	return rows, errs
}
