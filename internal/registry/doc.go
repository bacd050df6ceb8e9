// Package registry is the set of registered projects as bm2 changes it:
// the registry lock every command that changes the set holds ([Lock]),
// the lock of one project's reloads ([TryLockProject]), what bm2 serve
// writes for a project and how it is taken back ([Registration]), and the
// rules a new registration must pass against the others: one owner per
// name ([CheckOwner]) and no overlapping port ranges ([CheckConflict]),
// the scrape endpoints' ports being no project's ([ScrapePorts]).
//
// It is plain functions over the scope's layout (package layout) and the
// project files (package config), and a [Store] of one scope's projects
// that finds them by name or instance, reads a project dir's file, and
// says whether serve may register a project ([Store.CheckRegistrable]),
// scale rewrite its count ([Store.Rescaled]) and delete remove it
// ([Store.Deletable]); [Forget] removes what bm2
// keeps of a deleted project. What it refuses is a [Refusal], a [Missing]
// project, a [Blocked] change or a [WaitError], which the bm2 command
// words with its exit status.
package registry
