package tools

import (
	"context"
	"fmt"
)

// clusterInfo is `cluster info -o json`.
type clusterInfo struct {
	ClusterID  string       `json:"cluster_id"`
	Controller int32        `json:"controller"`
	Brokers    []brokerInfo `json:"brokers"`
	Topics     int          `json:"topics"`
}

type brokerInfo struct {
	ID   int32   `json:"id"`
	Host string  `json:"host"`
	Port int32   `json:"port"`
	Rack *string `json:"rack"`
}

// ClusterInfo prints the cluster id, the controller, the brokers and how
// many topics there are, from a Metadata request.
func ClusterInfo(ctx context.Context, env *Env) error {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	m, err := adm.Metadata(ctx)
	if err != nil {
		return deadline(ctx, "cluster info", err)
	}
	info := clusterInfo{ClusterID: m.Cluster, Controller: m.Controller, Brokers: []brokerInfo{}}
	for _, td := range m.Topics {
		if !td.IsInternal {
			info.Topics++
		}
	}
	for _, b := range m.Brokers {
		info.Brokers = append(info.Brokers, brokerInfo{ID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	if env.Format == JSON {
		return writeJSON(env.Out, info)
	}
	head := newTable(env.Out)
	head.row("CLUSTER", info.ClusterID)
	head.row("CONTROLLER", info.Controller)
	head.row("TOPICS", info.Topics)
	if err := head.flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Out)
	t := newTable(env.Out, "ID", "HOST", "PORT", "RACK")
	for _, b := range info.Brokers {
		id := fmt.Sprint(b.ID)
		if b.ID == info.Controller {
			id += "*"
		}
		rack := ""
		if b.Rack != nil {
			rack = *b.Rack
		}
		t.row(id, b.Host, b.Port, rack)
	}
	return t.flush()
}
