## The scheduler core (daemon/sched/): included from Makefile.am.
