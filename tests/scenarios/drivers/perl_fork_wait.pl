#!/usr/bin/perl
# A Perl script forks a worker that computes SECONDS on the CPU and waits for
# it with waitpid(): the main thread's wait4() is the hang, the worker the
# cause.  Prints {"pid", "tid", "child"} before the wait.
#   perl perl_fork_wait.pl SECONDS
use strict;
use warnings;
use Time::HiRes qw(time);

my $seconds = shift // 3;
$| = 1;
my $child = fork();
die "fork: $!\n" unless defined $child;
if ($child == 0) {
    my ($t0, $n) = (time(), 0);
    $n += sqrt($n + 1) while time() - $t0 < $seconds;
    exit 0;
}
print qq({"pid": $$, "tid": $$, "child": $child}\n);
waitpid($child, 0) == $child or die "waitpid: $!\n";
print qq({"status": $?}\n);
