package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ACLSpec selects or describes ACLs with kafka-acls.sh's flags: the
// resources (--topic, --group, --cluster, --transactional-id; none: any
// resource when listing or deleting), the pattern type, the principals
// and hosts allowed and denied, and the operations.
type ACLSpec struct {
	Topics, Groups, TransactionalIDs []string
	Cluster                          bool
	Pattern                          string // any, match, literal, prefixed; "" the command's default
	Allow, Deny                      []string
	AllowHosts, DenyHosts            []string
	Operations                       []string
	// Principal filters list by principal, allowed or denied
	// (kafka-acls.sh --list --principal).
	Principal string
}

// builder turns the spec into kadm's ACL builder. create: the principals
// and operations must be named, and the pattern defaults to literal.
func (s *ACLSpec) builder(create bool) (*kadm.ACLBuilder, error) {
	b := kadm.NewACLs()
	anyRes := len(s.Topics) == 0 && len(s.Groups) == 0 && len(s.TransactionalIDs) == 0 && !s.Cluster
	switch {
	case anyRes && create:
		return nil, usagef("name a resource: --topic, --group, --cluster or --transactional-id")
	case anyRes:
		b.AnyResource()
	default:
		b.MaybeTopics(s.Topics...).MaybeGroups(s.Groups...).MaybeTransactionalIDs(s.TransactionalIDs...).MaybeClusters(s.Cluster)
	}
	pattern := s.Pattern
	if pattern == "" {
		pattern = "literal"
		if !create {
			pattern = "any"
		}
	}
	p, err := kmsg.ParseACLResourcePatternType(pattern)
	if err != nil {
		return nil, usagef("--resource-pattern-type %q: any, match, literal or prefixed", pattern)
	}
	b.ResourcePatternType(p)
	var ops []kadm.ACLOperation
	for _, o := range s.Operations {
		op, err := kmsg.ParseACLOperation(strings.ReplaceAll(o, "-", "_"))
		if err != nil {
			return nil, usagef("--operation %q: %v", o, err)
		}
		ops = append(ops, op)
	}
	if create && len(ops) == 0 {
		return nil, usagef("name at least one --operation")
	}
	b.Operations(ops...)
	principal := func(p string) (string, error) {
		if p != "" && !strings.Contains(p, ":") {
			return "", usagef("principal %q: Kafka's form is Type:name, as User:alice", p)
		}
		return p, nil
	}
	for _, list := range [][]string{s.Allow, s.Deny, {s.Principal}} {
		for _, p := range list {
			if _, err := principal(p); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case create:
		if len(s.Allow) == 0 && len(s.Deny) == 0 {
			return nil, usagef("name a principal: --allow-principal or --deny-principal")
		}
		b.MaybeAllow(s.Allow...).MaybeAllowHosts(s.AllowHosts...).MaybeDeny(s.Deny...).MaybeDenyHosts(s.DenyHosts...)
		if len(s.Allow) > 0 && len(s.AllowHosts) == 0 {
			b.AllowHosts("*")
		}
		if len(s.Deny) > 0 && len(s.DenyHosts) == 0 {
			b.DenyHosts("*")
		}
	case s.Principal != "":
		b.Allow(s.Principal).AllowHosts().Deny(s.Principal).DenyHosts()
	case len(s.Allow) > 0 || len(s.Deny) > 0:
		b.MaybeAllow(s.Allow...).AllowHosts(s.AllowHosts...).MaybeDeny(s.Deny...).DenyHosts(s.DenyHosts...)
	default:
		b.Allow().AllowHosts().Deny().DenyHosts()
	}
	return b, nil
}

// aclRow is one ACL as kzctl prints it.
type aclRow struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	ResourceType string `json:"resource_type"`
	Resource     string `json:"resource"`
	Pattern      string `json:"pattern"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

func aclRowOf(a kadm.DescribedACL) aclRow {
	return aclRow{a.Principal, a.Host, a.Type.String(), a.Name, a.Pattern.String(), a.Operation.String(), a.Permission.String()}
}

func writeACLs(env *Env, rows []aclRow) error {
	slices.SortFunc(rows, func(a, b aclRow) int {
		return cmp.Or(strings.Compare(a.ResourceType, b.ResourceType), strings.Compare(a.Resource, b.Resource),
			strings.Compare(a.Principal, b.Principal), strings.Compare(a.Operation, b.Operation), strings.Compare(a.Permission, b.Permission))
	})
	if env.Format == JSON {
		return writeJSON(env.Out, rows)
	}
	t := newTable(env.Out, "PRINCIPAL", "HOST", "RESOURCE-TYPE", "RESOURCE", "PATTERN", "OPERATION", "PERMISSION")
	for _, r := range rows {
		t.row(r.Principal, r.Host, r.ResourceType, r.Resource, r.Pattern, r.Operation, r.Permission)
	}
	return t.flush()
}

// ACLList prints the ACLs the spec matches (every ACL with no flags).
func ACLList(ctx context.Context, env *Env, spec ACLSpec) error {
	b, err := spec.builder(false)
	if err != nil {
		return err
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.DescribeACLs(ctx, b)
	if err != nil {
		return deadline(ctx, "acl list", err)
	}
	rows := []aclRow{}
	for _, r := range res {
		if r.Err != nil {
			return fmt.Errorf("acl list: %w", kafkaErr(r.Err, r.ErrMessage))
		}
		for _, a := range r.Described {
			rows = append(rows, aclRowOf(a))
		}
	}
	return writeACLs(env, rows)
}

// ACLCreate creates the ACLs the spec describes: each principal allowed
// or denied each operation on each resource.
func ACLCreate(ctx context.Context, env *Env, spec ACLSpec) error {
	b, err := spec.builder(true)
	if err != nil {
		return err
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.CreateACLs(ctx, b)
	if err != nil {
		return deadline(ctx, "acl create", err)
	}
	var errs []error
	rows := []aclRow{}
	for _, r := range res {
		row := aclRow{r.Principal, r.Host, r.Type.String(), r.Name, r.Pattern.String(), r.Operation.String(), r.Permission.String()}
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s %s %s on %s %s: %w", row.Permission, row.Principal, row.Operation, row.ResourceType, row.Resource, kafkaErr(r.Err, r.ErrMessage)))
			continue
		}
		rows = append(rows, row)
	}
	if err := writeACLs(env, rows); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// ACLDelete deletes the ACLs the spec matches and prints them.
func ACLDelete(ctx context.Context, env *Env, spec ACLSpec) error {
	if spec.Pattern == "" {
		spec.Pattern = "literal" // kafka-acls.sh --remove's default
	}
	b, err := spec.builder(false)
	if err != nil {
		return err
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.DeleteACLs(ctx, b)
	if err != nil {
		return deadline(ctx, "acl delete", err)
	}
	var errs []error
	rows := []aclRow{}
	for _, r := range res {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("acl delete: %w", kafkaErr(r.Err, r.ErrMessage)))
			continue
		}
		for _, d := range r.Deleted {
			if d.Err != nil {
				errs = append(errs, fmt.Errorf("acl delete: %w", kafkaErr(d.Err, d.ErrMessage)))
				continue
			}
			rows = append(rows, aclRow{d.Principal, d.Host, d.Type.String(), d.Name, d.Pattern.String(), d.Operation.String(), d.Permission.String()})
		}
	}
	if err := writeACLs(env, rows); err != nil {
		return err
	}
	return errors.Join(errs...)
}
