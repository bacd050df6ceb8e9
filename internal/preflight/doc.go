// Package preflight is what bm2 check looks at on the host before a
// project is served, as typed results that the command line words:
// which project an argument names and who speaks for its file
// (Resolve, which bm2 gateway takes too), its ports as its user would
// see them (SeePorts), its runtime's version (Runtime), and what stands
// in the way of registering it (Register). The looks themselves are
// control's, explain's and jsruntime's; preflight puts them together.
package preflight
