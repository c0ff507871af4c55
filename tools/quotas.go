package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// QuotaEntity names a client quota entity as kafka-configs.sh does:
// --user and --client-id, each a name or "<default>" (or the *Default
// flags); an empty name is no part.
type QuotaEntity struct {
	User, ClientID               string
	UserDefault, ClientIDDefault bool
	IP                           string // an address or <default> (connection_creation_rate)
}

const defaultName = "<default>"

func (e QuotaEntity) parts() kadm.ClientQuotaEntity {
	var out kadm.ClientQuotaEntity
	add := func(typ, name string, dflt bool) {
		switch {
		case dflt || name == defaultName:
			out = append(out, kadm.ClientQuotaEntityComponent{Type: typ})
		case name != "":
			n := name
			out = append(out, kadm.ClientQuotaEntityComponent{Type: typ, Name: &n})
		}
	}
	add("user", e.User, e.UserDefault)
	add("client-id", e.ClientID, e.ClientIDDefault)
	add("ip", e.IP, false)
	return out
}

// quotaRow is one quota value as kzctl prints it.
type quotaRow struct {
	Entity string  `json:"entity"`
	Key    string  `json:"key"`
	Value  float64 `json:"value"`
}

// QuotaDescribe prints the client quotas of the entities matching e:
// each part named matches that name (or the default), and with strict
// only entities with no other part; nothing named lists every quota.
func QuotaDescribe(ctx context.Context, env *Env, e QuotaEntity, strict bool) error {
	var comps []kadm.DescribeClientQuotaComponent
	for _, p := range e.parts() {
		c := kadm.DescribeClientQuotaComponent{Type: p.Type, MatchName: p.Name}
		if p.Name == nil {
			c.MatchType = 1 // the default
		}
		comps = append(comps, c)
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.DescribeClientQuotas(ctx, strict, comps)
	if err != nil {
		return deadline(ctx, "quota describe", err)
	}
	rows := []quotaRow{}
	for _, q := range res {
		for _, v := range q.Values {
			rows = append(rows, quotaRow{q.Entity.String(), v.Key, v.Value})
		}
	}
	if env.Format == JSON {
		return writeJSON(env.Out, rows)
	}
	t := newTable(env.Out, "ENTITY", "KEY", "VALUE")
	for _, r := range rows {
		t.row(r.Entity, r.Key, strconv.FormatFloat(r.Value, 'f', -1, 64))
	}
	return t.flush()
}

// QuotaAlter sets (add: key=value,...) and removes (del: key,...) quota
// values of one entity, as kafka-configs.sh --alter --add-config /
// --delete-config does.
func QuotaAlter(ctx context.Context, env *Env, e QuotaEntity, add, del []string) error {
	entity := e.parts()
	if len(entity) == 0 {
		return usagef("name the entity: --user and/or --client-id, or --ip (a name or %s)", defaultName)
	}
	var ops []kadm.AlterClientQuotaOp
	for _, kv := range add {
		k, v, ok := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil {
			return usagef("--add-config %q: key=number", kv)
		}
		ops = append(ops, kadm.AlterClientQuotaOp{Key: strings.TrimSpace(k), Value: f})
	}
	for _, k := range del {
		ops = append(ops, kadm.AlterClientQuotaOp{Key: strings.TrimSpace(k), Remove: true})
	}
	if len(ops) == 0 {
		return usagef("nothing to change: --add-config or --delete-config")
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: ops}})
	if err != nil {
		return deadline(ctx, "quota alter", err)
	}
	var errs []error
	for _, r := range res {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("quota alter %s: %w", r.Entity, kafkaErr(r.Err, r.ErrMessage)))
			continue
		}
		fmt.Fprintf(env.Out, "%s: done\n", r.Entity)
	}
	return errors.Join(errs...)
}
