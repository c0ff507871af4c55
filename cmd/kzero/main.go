// Command kzero is the broker: a Kafka-protocol server with its data in
// Kafka's on-disk format.
//
//	kzero [--config server.properties] [--override key=value]...
//
// With neither flag it runs the embedded single-node default: listener
// 127.0.0.1:9092, data in ./data.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"kzero/net/api"
	"kzero/node"
)

// overrideFlags collects repeated --override key=value flags.
type overrideFlags map[string]string

func (o overrideFlags) String() string { return fmt.Sprint(map[string]string(o)) }

func (o overrideFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("--override %q is not key=value", s)
	}
	o[strings.TrimSpace(k)] = v
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kzero:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("kzero", flag.ContinueOnError)
	configFile := fs.String("config", "", "a Kafka-style server.properties file")
	overrides := overrideFlags{}
	fs.Var(overrides, "override", "key=value, overriding the config file (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(logger)

	var file map[string]string
	if *configFile != "" {
		f, err := os.Open(*configFile)
		if err != nil {
			return err
		}
		file, _, err = parseProperties(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *configFile, err)
		}
	}
	cfg, err := loadConfig(file, overrides, logger)
	if err != nil {
		return err
	}
	// Before the ready line: a supervisor may signal as soon as it sees it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	ncfg, err := cfg.nodeConfig(logger)
	if err != nil {
		return err
	}
	n, err := node.Start(ncfg)
	if err != nil {
		return err
	}
	fmt.Println(readyMessage(n.Addr(), n.ControllerAddr()))
	s := <-sig
	for s == syscall.SIGHUP {
		// SIGHUP: TLS listeners read their certificates again (ssl.go).
		// The controller listener's too; the inter-broker and controller
		// clients keep the certificates they started with.
		reload := ncfg.Listeners
		if ncfg.ControllerTLS != nil {
			reload = append(slices.Clip(reload), node.Listener{Listener: api.Listener{Name: "controller listener"}, TLS: ncfg.ControllerTLS})
		}
		reloadTLS(reload, logger)
		s = <-sig
	}
	logger.Info("shutting down", "signal", s.String())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return n.Stop(ctx)
}

// startNode starts a node configured by cfg.
func startNode(cfg *brokerConfig, logger *slog.Logger) (*node.Node, error) {
	ncfg, err := cfg.nodeConfig(logger)
	if err != nil {
		return nil, err
	}
	return node.Start(ncfg)
}
