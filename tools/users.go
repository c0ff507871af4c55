package tools

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// scramMechanism parses SCRAM-SHA-256 or SCRAM-SHA-512.
func scramMechanism(s string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(s) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, usagef("--mechanism %q: SCRAM-SHA-256 or SCRAM-SHA-512", s)
}

// scramRow is one user's credential as kzctl prints it.
type scramRow struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

// UserScramList prints the SCRAM credentials (mechanism and iterations,
// never more: the broker keeps no password) of the users named, or of
// every user with one.
func UserScramList(ctx context.Context, env *Env, users []string) error {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.DescribeUserSCRAMs(ctx, users...)
	if err != nil {
		return deadline(ctx, "user scram list", err)
	}
	var errs []error
	rows := []scramRow{}
	for _, u := range slices.Sorted(maps.Keys(res)) {
		d := res[u]
		if d.Err != nil {
			errs = append(errs, fmt.Errorf("user %s: %w", u, kafkaErr(d.Err, d.ErrMessage)))
			continue
		}
		for _, c := range d.CredInfos {
			rows = append(rows, scramRow{u, c.Mechanism.String(), c.Iterations})
		}
	}
	if env.Format == JSON {
		if err := writeJSON(env.Out, rows); err != nil {
			return err
		}
	} else {
		t := newTable(env.Out, "USER", "MECHANISM", "ITERATIONS")
		for _, r := range rows {
			t.row(r.User, r.Mechanism, r.Iterations)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// UserScramSet sets a user's password for a mechanism; the client salts
// it and sends the salted password only (KIP-554).
func UserScramSet(ctx context.Context, env *Env, user, mechanism, password string, iterations int32) error {
	mech, err := scramMechanism(mechanism)
	if err != nil {
		return err
	}
	if password == "" {
		return usagef("--password is empty")
	}
	return alterScram(ctx, env, "user scram set", nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mech, Iterations: iterations, Password: password}})
}

// UserScramDelete deletes a user's credential for a mechanism.
func UserScramDelete(ctx context.Context, env *Env, user, mechanism string) error {
	mech, err := scramMechanism(mechanism)
	if err != nil {
		return err
	}
	return alterScram(ctx, env, "user scram delete", []kadm.DeleteSCRAM{{User: user, Mechanism: mech}}, nil)
}

func alterScram(ctx context.Context, env *Env, what string, del []kadm.DeleteSCRAM, upsert []kadm.UpsertSCRAM) error {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.AlterUserSCRAMs(ctx, del, upsert)
	if err != nil {
		return deadline(ctx, what, err)
	}
	for _, u := range slices.Sorted(maps.Keys(res)) {
		if r := res[u]; r.Err != nil {
			return fmt.Errorf("%s %s: %w", what, u, kafkaErr(r.Err, r.ErrMessage))
		}
		fmt.Fprintf(env.Out, "%s: done\n", u)
	}
	return nil
}
