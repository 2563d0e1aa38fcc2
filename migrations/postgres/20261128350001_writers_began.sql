-- PostgreSQL only (SQLite's processes use the file `<database>-writers` instead): a writer that
-- begins a write transaction advances this sequence, at most four times a second per process,
-- and run imports of every process read it between their COPY chunks to give way while people
-- write (store::write_gate, store::import_writer::OtherWriters). nextval takes no lock that
-- anyone waits for, and a sequence is no table, so `claimpool db copy` has nothing to copy.
CREATE SEQUENCE writers_began;
