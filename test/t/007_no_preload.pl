
# Copyright (c) 2026, the ddl_notify authors

# 007_no_preload: ddl_notify without shared_preload_libraries.
#
# G2/G3 without the worker: capture works and CALL ddl_notify.deliver()
# delivers with the same engine; CREATE EXTENSION warns that automatic
# delivery is off and ddl_notify.delivery_status() (the status view's
# "delivery" column) says so.  CREATE EXTENSION used to end the session
# here (a server-start setting defined after startup).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('nopreload');
$node->init;
$node->start;

my ($ret, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION ddl_notify;');
is($ret, 0, 'G2: CREATE EXTENSION works without shared_preload_libraries');
like($err, qr/automatic delivery is off/, 'CREATE EXTENSION warns that automatic delivery is off');
unlike($err, qr/FATAL/, 'the session survives CREATE EXTENSION');

$node->safe_psql('postgres', q{
CREATE TABLE log (ident text);
CREATE FUNCTION h(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.log VALUES (e.object_identity) $$;
SELECT ddl_notify.subscribe('s', 'h(ddl_notify.event)');
CREATE TABLE t1 ();
});

is($node->safe_psql('postgres', q{SELECT count(*) FROM ddl_notify.event WHERE object_identity = 'public.t1'}),
	'1', 'G2: DDL is recorded without the preload');
like($node->safe_psql('postgres', 'SELECT delivery FROM ddl_notify.subscriber_status'),
	qr/^manual: ddl_notify is not in shared_preload_libraries/,
	'the status view says delivery is manual');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'ddl_notify%'}),
	'0', 'no launcher or worker runs');

$node->safe_psql('postgres', 'CALL ddl_notify.deliver()');
is($node->safe_psql('postgres', 'SELECT string_agg(ident, \',\') FROM log'),
	'public.t1', 'G3: CALL ddl_notify.deliver() delivers without the worker');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ddl_notify.event'),
	'0', 'the delivered event is gone');

$node->stop;
done_testing();
