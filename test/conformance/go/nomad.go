package main

func nomadChecks(control Control) []Check {
	return []Check{}
}
