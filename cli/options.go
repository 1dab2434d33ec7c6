package cli

import (
	"context"

	"github.com/dshkit/dsh/runner"
)

// Plugin is a native dsh plugin compiled into the CLI: a type with the Register method
// that dshscaffold writes (go generate), registering its typed listeners on a registrar.
// A plugin with a Name() string method is registered under that name, else under its
// type's name (runner.PluginName).
type Plugin = runner.Plugin

// Option configures the CLI that Run and Main give (see WithPlugins).
type Option func(*config)

// config is what the options set; Run passes it to the commands in their context.
type config struct {
	plugins []Plugin
}

// WithPlugins compiles native plugins into the CLI: dsh run and every dsh acp session
// register them, in order, before the hooks bridges and the example plugins of --demo,
// exactly as a program of one's own would. This is the whole dsh CLI (run, acp, hooks,
// log) with one's plugins, without a fork, as a custom build:
//
//	func main() { cli.Main(cli.WithPlugins(&myplugin.Plugin{})) }
func WithPlugins(plugins ...Plugin) Option {
	return func(c *config) { c.plugins = append(c.plugins, plugins...) }
}

type configKey struct{}

// withConfig returns ctx carrying the CLI's configuration for the commands.
func withConfig(ctx context.Context, opts []Option) context.Context {
	c := &config{}
	for _, o := range opts {
		o(c)
	}
	return context.WithValue(ctx, configKey{}, c)
}

// configOf is the CLI configuration ctx carries (an empty one when none).
func configOf(ctx context.Context) *config {
	if c, ok := ctx.Value(configKey{}).(*config); ok {
		return c
	}
	return &config{}
}
