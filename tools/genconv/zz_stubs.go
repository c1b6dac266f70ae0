package main

func writeHousehold(g *gen) {}
