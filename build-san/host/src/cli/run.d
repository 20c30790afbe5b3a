build-san/host/src/cli/run.o: src/cli/run.c src/cli/../analyzer/capture.h \
 src/cli/../analyzer/../format/format.h src/cli/cli.h
src/cli/../analyzer/capture.h:
src/cli/../analyzer/../format/format.h:
src/cli/cli.h:
