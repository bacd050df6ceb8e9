# bash completion for bm2 (made by `bm2 completion bash`; installed as
# /usr/share/bash-completion/completions/bm2). The candidates come from
# `bm2 __complete`: commands, flags, project and instance names.
_bm2() {
	local cur=${COMP_WORDS[COMP_CWORD]} line files=
	COMPREPLY=()
	while IFS= read -r line; do
		if [[ $line == :files ]]; then
			files=1
		elif [[ -n $line ]]; then
			COMPREPLY+=("$line")
		fi
	done < <("${COMP_WORDS[0]}" __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
	if [[ -n $files ]]; then
		compopt -o filenames 2>/dev/null || true
		while IFS= read -r line; do
			COMPREPLY+=("$line")
		done < <(compgen -f -- "$cur")
	fi
}
complete -F _bm2 bm2
