# fish completion for bm2 (made by `bm2 completion fish`; installed as
# /usr/share/fish/vendor_completions.d/bm2.fish). The candidates come from
# `bm2 __complete`: commands, flags, project and instance names.
function __bm2_complete
	set -l words (commandline -opc)
	set -l cur (commandline -ct)
	set -l files 0
	for line in ($words[1] __complete -- $words[2..-1] "$cur" 2>/dev/null)
		if test "$line" = :files
			set files 1
		else if test -n "$line"
			echo $line
		end
	end
	if test $files = 1
		__fish_complete_path "$cur"
	end
end
complete -c bm2 -f -a '(__bm2_complete)'
