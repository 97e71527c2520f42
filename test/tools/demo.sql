CREATE EXTENSION ddl_notify;
CREATE TABLE demo_t (id int);
TABLE ddl_notify.event;
