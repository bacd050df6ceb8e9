// Package atomicfile writes files so that a reader sees either the old
// content or the new one, never half of either, and the new one survives a
// crash once the call returns.
//
// Every writer in bm2 goes through it: the generator's unit files, the
// project files bm2 serve registers, the errored marks and the runtime
// version cache. The recipe is the classic one:
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
// thousand directories on tmpfs and must stay fast.
package atomicfile
