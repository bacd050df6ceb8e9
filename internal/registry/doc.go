// Package registry is the set of registered projects as bm2 changes it:
// the registry lock every command that changes the set holds ([Lock]),
// the lock of one project's reloads ([TryLockProject]), what bm2 serve
// writes for a project and how it is taken back ([Registration]), and the
// rules a new registration must pass against the others: one owner per
// name ([CheckOwner]) and no overlapping port ranges ([CheckConflict]),
// the scrape endpoints' ports being no project's ([ScrapePorts]).
//
// It is plain functions over the scope's layout (package layout) and the
// project files (package config); what it refuses is a [Refusal] or a
// [WaitError], which the bm2 command words with its exit status.
package registry
