package main

func writeOpsAgent(g *gen)  {}
func writeNovel(g *gen)     {}
func writeHousehold(g *gen) {}
