package main

import "github.com/headroom-planner/headroom/profiles/modelsrc"

func init() { openModelFile = modelsrc.Open }
