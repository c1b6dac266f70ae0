package main

func writeNovel(g *gen)     {}
func writeHousehold(g *gen) {}
