package cli

import (
	"context"
	"reflect"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
)

// Plugin is a native dsh plugin compiled into the CLI: a type with the Register method
// that dshscaffold writes (go generate), registering its typed listeners on a registrar.
// A plugin with a Name() string method is registered under that name, else under its
// type's name.
type Plugin interface {
	Register(r *dsh.Registrar) (unregister func())
}

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

// registerPlugins registers the compiled-in plugins on reg, each under its name.
func registerPlugins(reg *dsh.Registry, plugins []Plugin) {
	for _, p := range plugins {
		p.Register(reg.Plugin(pluginName(p)))
	}
}

// pluginName is p's Name() when it has one, else its type's name in lower case (the
// package's name for a type named Plugin, as dshscaffold's plugins are).
func pluginName(p Plugin) string {
	if n, ok := p.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	t := reflect.TypeOf(p)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "Plugin" && t.PkgPath() != "" {
		return t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:]
	}
	return strings.ToLower(t.Name())
}
