# zsh -f zsh_complete.zsh DIR LINE: types LINE and a TAB into an interactive
# zsh whose fpath starts with DIR (where _heapprof is) and writes every match
# its completion system offers into DIR/matches, one a line.
# test_install.c reads them.
zmodload zsh/zpty
dir=$1
zpty z zsh -f -i
zpty -w z "fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd() { local -a m; builtin compadd -O m \"\$@\"; print -rl -- \$m >>$dir/matches; builtin compadd \"\$@\" }"
zpty -w z "bindkey '^I' complete-word; : >$dir/matches"
zpty -w -n z "$2"$'\t'
# The matches are written when the completion has run; wait for them.
for i in {1..50}; do
	[[ -s $dir/matches ]] && break
	sleep 0.1
done
sleep 0.3
zpty -d z
