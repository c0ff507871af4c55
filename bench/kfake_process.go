package bench

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

// serveKfakeEnv makes any program that links this package (kzctl, the
// package's tests) serve a one-broker kfake instead of running: the suite
// starts the peer it compares against as a process of its own, so the
// peer's CPU seconds and peak RSS are measured as kzero's are.
const serveKfakeEnv = "KZERO_BENCH_SERVE_KFAKE"

func init() {
	if os.Getenv(serveKfakeEnv) != "" {
		os.Exit(serveKfake())
	}
}

// serveKfake runs kfake on a loopback port until SIGTERM or SIGINT and
// prints "kfake ready on ADDR" once it listens.
func serveKfake() int {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		return 1
	}
	fmt.Printf("kfake ready on %s\n", c.ListenAddrs()[0])
	<-stop
	c.Close()
	return 0
}
