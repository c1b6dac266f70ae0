package main

func writeHosting(g *gen)   {}
func writeOpsAgent(g *gen)  {}
func writeNovel(g *gen)     {}
func writeHousehold(g *gen) {}
