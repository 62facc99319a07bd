#!/usr/bin/perl
# Two Perl DBI (DBD::SQLite) users of one database file.
#   perl_dbi_sqlite.pl DB init
#   perl_dbi_sqlite.pl DB hold SECONDS  a batch job: BEGIN IMMEDIATE (the write
#                                       lock), computes SECONDS, COMMIT
#   perl_dbi_sqlite.pl DB write         an application: busy timeout 30 s (the
#                                       busy handler sleeps and retries); after
#                                       a line on stdin, one INSERT
# Prints {"pid", "tid"} first (hold: once it has the lock).
use strict;
use warnings;
use DBI;
use Time::HiRes qw(time);

my ($db, $mode, $seconds) = @ARGV;
$| = 1;
my $dbh = DBI->connect("dbi:SQLite:dbname=$db", "", "", { RaiseError => 1, AutoCommit => 1 });
if ($mode eq "init") {
    $dbh->do("CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, msg TEXT)");
    exit 0;
}
if ($mode eq "hold") {
    $dbh->do("BEGIN IMMEDIATE");
    $dbh->do("INSERT INTO log(msg) VALUES ('batch start')");
    print qq({"pid": $$, "tid": $$}\n);
    my ($t0, $n) = (time(), 0);
    $n += sqrt($n + 1) while time() - $t0 < $seconds;
    $dbh->do("INSERT INTO log(msg) VALUES ('batch done')");
    $dbh->do("COMMIT");
    print qq({"committed": true}\n);
    exit 0;
}
$dbh->sqlite_busy_timeout(30000);
for my $i (1 .. 20) {
    select(undef, undef, undef, 0.02);
    $dbh->do("INSERT INTO log(msg) VALUES (?)", undef, "app $i");
}
print qq({"pid": $$, "tid": $$}\n);
<STDIN>;
$dbh->do("INSERT INTO log(msg) VALUES ('app final')");
print qq({"inserted": true}\n);
