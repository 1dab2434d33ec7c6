package perOS

func name() string { return "linux" }
