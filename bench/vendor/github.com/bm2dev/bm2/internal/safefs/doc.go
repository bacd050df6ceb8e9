// Package safefs is how bm2 opens, reads and writes files that someone
// else may have a hand in: a project file root acts on, an app's env_file,
// the bm2.toml root writes into a user's directory, bm2's own state, spool
// and crash logs. Every open that must not follow a symbolic link goes
// through it, so that the rule is written once.
//
// Opening. [OpenAt] is openat(2) that never follows a link at the name it
// opens (O_NOFOLLOW, and O_CLOEXEC, O_NOCTTY): a link there fails with
// ELOOP. [OpenFile] is the same for a path whose directories are bm2's own
// (the kernel resolves them; only the last component is not followed).
//
// Walking. Where the directories on the way are not bm2's, [OpenDir] and
// [Resolve] walk the path from / one component at a time, each directory
// opened with O_NOFOLLOW from the one before, and decide at each link
// what to do by a [Policy]: follow none ([FollowNone]), follow only what
// root made in a directory only root may write ([FollowRootOwned]), or
// follow every link by reading it and walking its target in turn
// ([FollowAll]), never by path, with [Policy.Visit] shown who owns each
// directory and link on the way. Nothing is followed by path, so a link
// swapped in after it was looked at changes nothing that was opened. The
// callers' policies:
//
//   - trust.Read: [FollowAll] to the file, link at the file included,
//     counting the owner of every directory and link as a writer;
//   - envfile.Read: [FollowAll] down to the app's directory, [FollowNone]
//     below it, never the file itself;
//   - bm2 import: [FollowRootOwned], no "..", missing directories made,
//     never the file itself.
//
// openat2(2)'s RESOLVE_NO_SYMLINKS would do part of this in the kernel,
// but a seccomp filter may answer ENOSYS to it, and a fallback must not be
// weaker, so there is only the walk.
//
// Writing. [Write] replaces a file so that a reader sees either the old
// content or the new one, never half of either, and the new one survives
// a crash once the call returns. Every file bm2 writes whole goes through
// it (or [Dir.Write], the same in a walked directory): the generator's
// unit files, the project files bm2 serve registers, bm2.toml written by
// bm2 import, the spool, the runtime version cache. (Crash logs are
// appended to, and lock files are only locked: [OpenFile].) The recipe is
// the classic one:
//
//  1. create a temporary file next to the target (O_EXCL|O_NOFOLLOW, so a
//     planted symlink is never followed),
//  2. write, set the mode, fsync,
//  3. rename(2) it over the target,
//  4. fsync the directory, so the rename itself is durable.
//
// [Write] does all four for one file. A [Batch] does the first three for
// each of many files and syncs every directory it touched once, in
// [Batch.Sync]: the generator writes thousands of files into a few
// thousand directories on tmpfs and must stay fast. [CreateExclusive]
// creates a file only if it does not exist (the errored marks).
//
// Where there is nothing to replace and nobody reads until the writer is
// done (the empty directory systemd gives a generator, on a tmpfs), the
// recipe's temporary name and rename buy nothing: [CreateAt] and
// [SymlinkAt] create each file in place, O_EXCL|O_NOFOLLOW, so they never
// open, replace or follow anything that is there already (EEXIST, and the
// caller falls back to the recipe).
//
// Reading. What bm2 reads from someone else, a file or a child's output,
// is bounded: [ReadAll] reads at most a given size and says when there
// was more ([ErrTooLarge]); a [Capped] keeps the first bytes written to
// it and drops the rest without failing the writer.
package safefs
