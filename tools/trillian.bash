# bash completion for trillian: commands, shipped recipes (and .cfg files),
# each command's options, stage names after --force and keys after --set
# (from the recipe already on the command line, else the default one).
# The candidates come from the trillian being completed (`trillian
# __complete`), so they are always those of that binary and its data.
# Installed by `make install` as PREFIX/share/bash-completion/completions/trillian.
_trillian() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local tr=${COMP_WORDS[0]} cword=$COMP_CWORD i recipe=
    # bash splits "--set KEY=VALUE" at '=': complete nothing for VALUE
    [ "$prev" = "=" ] && return 0
    if [ "$cword" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$("$tr" __complete commands 2>/dev/null)" -- "$cur"))
        return 0
    fi
    local cmd=${COMP_WORDS[1]}
    # the recipe: the first word after the command that is not an option or its value
    for ((i = 2; i < cword; i++)); do
        case ${COMP_WORDS[i-1]} in
        -o|--output|-j|--jobs|--cache|--set|--force|--distcc|--mirror|--to|--older-than) continue ;;
        esac
        case ${COMP_WORDS[i]} in -*|=) ;; *) recipe=${COMP_WORDS[i]}; break ;; esac
    done
    case $prev in
    --force)
        COMPREPLY=($(compgen -W "$("$tr" __complete stages $recipe 2>/dev/null)" -- "$cur"))
        return 0 ;;
    --set)
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -W "$("$tr" __complete keys $recipe 2>/dev/null)" -S = -- "$cur"))
        return 0 ;;
    -o|--output|--cache|--to|--mirror)
        COMPREPLY=($(compgen -d -- "$cur"))
        return 0 ;;
    -j|--jobs|--distcc|--older-than)
        return 0 ;;
    esac
    if [ "$cmd" = help ]; then
        [ "$cword" -eq 2 ] &&
            COMPREPLY=($(compgen -W "$("$tr" __complete help 2>/dev/null)" -- "$cur"))
        return 0
    fi
    if [ "$cmd" = cache ] && [ "$cword" -eq 2 ]; then
        COMPREPLY=($(compgen -W verify -- "$cur"))
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("$tr" __complete options "$cmd" 2>/dev/null)" -- "$cur"))
        return 0
    fi
    case $cmd in
    build|plan|check|fetch|clean)
        if [ -z "$recipe" ]; then
            COMPREPLY=($(compgen -W "$("$tr" __complete recipes 2>/dev/null)" -- "$cur")
                       $(compgen -f -X '!*.cfg' -- "$cur") $(compgen -d -S / -- "$cur"))
            [ ${#COMPREPLY[@]} -eq 1 ] && [[ ${COMPREPLY[0]} == */ ]] && compopt -o nospace 2>/dev/null
        fi ;;
    report)
        COMPREPLY=($(compgen -d -- "$cur")) ;;
    esac
    return 0
}
complete -F _trillian trillian
