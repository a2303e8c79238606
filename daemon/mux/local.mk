## cohort-mux (daemon/mux/): included from Makefile.am. One user's
## shared TLS connection to the controller, started by the CLI; it speaks
## to the controller through the CLI's own connection code (client/).
bin_PROGRAMS += cohort-mux
cohort_mux_SOURCES = daemon/mux/muxd.c
cohort_mux_CFLAGS = $(client_libclient_a_CFLAGS)
cohort_mux_LDADD = $(CLIENT_LIBS)
