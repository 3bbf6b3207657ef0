-- The fleet's shared ledger on PostgreSQL: one file, in numbered migrations.
-- `leasefs-bridge migrate` applies, in order and each in its own transaction,
-- every migration whose number the table fleet.migrations does not hold yet.
-- A migration is never edited once released: a change is a new one below.
--
-- Who may do what is the engine's, not the bridge's: every table has row-level
-- security, and the two kinds of login role see only what their policies let
-- them:
--   fleet_machine  one login role per machine (the bridge's): inserts its own
--                  projects, requests, audit records and signed heads, reads its
--                  own rows and its policy, never inserts a decision;
--   fleet_person   one login role per approver: reads the requests of the
--                  projects delegated to it, inserts decisions as itself.
-- The administrator (the cluster's owner) enrolls machines and people and
-- delegates projects through the functions at the end.

-- migration: 1 ledger
CREATE SCHEMA IF NOT EXISTS fleet;  -- made with fleet.migrations by the runner
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_machine') THEN
    CREATE ROLE fleet_machine NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_person') THEN
    CREATE ROLE fleet_person NOLOGIN;
  END IF;
END
$$;
REVOKE ALL ON SCHEMA fleet FROM PUBLIC;
GRANT USAGE ON SCHEMA fleet TO fleet_machine, fleet_person;

-- A role name is also a NOTIFY channel's tail: kept to plain lower-case words.
CREATE DOMAIN fleet.role_name AS text CHECK (VALUE ~ '^[a-z][a-z0-9_]{0,39}$');
CREATE DOMAIN fleet.sha256_hex AS text CHECK (VALUE ~ '^[0-9a-f]{64}$');

CREATE TABLE fleet.machines (
  name fleet.role_name PRIMARY KEY,
  enrolled_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE fleet.people (
  name fleet.role_name PRIMARY KEY,
  enrolled_at timestamptz NOT NULL DEFAULT now()
);

-- One project per daemon: a root on a machine.
CREATE TABLE fleet.projects (
  id bigserial PRIMARY KEY,
  machine fleet.role_name NOT NULL DEFAULT current_user REFERENCES fleet.machines (name),
  root text NOT NULL CHECK (root ~ '^/' AND length(root) <= 4096),
  first_seen timestamptz NOT NULL DEFAULT now(),
  UNIQUE (machine, root)
);

-- Which person decides the requests of which project.
CREATE TABLE fleet.delegations (
  person fleet.role_name NOT NULL REFERENCES fleet.people (name),
  project_id bigint NOT NULL REFERENCES fleet.projects (id),
  PRIMARY KEY (person, project_id)
);

-- A daemon's pending request as its bridge saw it. digest is SHA-256 of the
-- request's canonical JSON (fleet/request_digest.hpp): a decision names the
-- digest the person read, and is applied only to a request that still has it.
CREATE TABLE fleet.requests (
  id bigserial PRIMARY KEY,
  machine fleet.role_name NOT NULL DEFAULT current_user REFERENCES fleet.machines (name),
  project_id bigint NOT NULL REFERENCES fleet.projects (id),
  local_id text NOT NULL CHECK (local_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
  task_id text NOT NULL CHECK (length(task_id) BETWEEN 1 AND 128),
  turn bigint NOT NULL CHECK (turn >= 0),
  paths jsonb NOT NULL CHECK (jsonb_typeof(paths) = 'array'),
  ops jsonb NOT NULL CHECK (jsonb_typeof(ops) = 'array'),
  reason text NOT NULL CHECK (length(reason) <= 65536),
  requester_uid bigint,
  requester_pid bigint,
  requester_command text CHECK (length(requester_command) <= 65536),
  created_ms bigint NOT NULL,
  digest fleet.sha256_hex NOT NULL,
  inserted_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, task_id, local_id)
);

-- The first decision for a request wins: request_id is unique, a second insert
-- fails. decided_by is the person's own role (the policy checks it).
CREATE TABLE fleet.decisions (
  id bigserial PRIMARY KEY,
  request_id bigint NOT NULL UNIQUE REFERENCES fleet.requests (id),
  decision text NOT NULL CHECK (decision IN ('approve', 'reject')),
  decided_by fleet.role_name NOT NULL DEFAULT current_user,
  digest fleet.sha256_hex NOT NULL,
  reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 4096),
  decided_at timestamptz NOT NULL DEFAULT now()
);

-- What the bridge did with a decision: applied on the daemon, or dropped as
-- stale (the request no longer pending, its digest or turn moved) with why.
CREATE TABLE fleet.decision_outcomes (
  decision_id bigint PRIMARY KEY REFERENCES fleet.decisions (id),
  machine fleet.role_name NOT NULL DEFAULT current_user REFERENCES fleet.machines (name),
  outcome text NOT NULL CHECK (outcome IN ('applied', 'stale')),
  detail text NOT NULL DEFAULT '' CHECK (length(detail) <= 4096),
  reported_at timestamptz NOT NULL DEFAULT now()
);

-- Central policy rows; machine NULL covers every machine. Read by the machines,
-- written by the administrator.
CREATE TABLE fleet.policy (
  id bigserial PRIMARY KEY,
  machine fleet.role_name REFERENCES fleet.machines (name),
  scope text NOT NULL,
  rule jsonb NOT NULL,
  owner text NOT NULL,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Every audit record of every project, shipped in order: line is the record's
-- exact bytes in the daemon's audit.jsonl (its hash covers them), event the same
-- record's event, for queries. The trigger below takes a record only as the
-- next one of its project's chain: no gap, no duplicate, no fork.
CREATE TABLE fleet.audit_records (
  project_id bigint NOT NULL REFERENCES fleet.projects (id),
  machine fleet.role_name NOT NULL DEFAULT current_user REFERENCES fleet.machines (name),
  seq bigint NOT NULL CHECK (seq >= 1),
  ts_ms bigint NOT NULL,
  prev fleet.sha256_hex NOT NULL,
  hash fleet.sha256_hex NOT NULL,
  line text NOT NULL CHECK (length(line) <= 1048576),
  event jsonb NOT NULL,
  shipped_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, seq)
);

-- The last record the ledger holds per project, kept by the trigger.
CREATE TABLE fleet.audit_heads (
  project_id bigint PRIMARY KEY REFERENCES fleet.projects (id),
  machine fleet.role_name NOT NULL REFERENCES fleet.machines (name),
  seq bigint NOT NULL,
  hash fleet.sha256_hex NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Signed audit heads (checkpoints) as the daemons sign them: size is the
-- chain's length the signature covers, checkpoint the signed note's text.
CREATE TABLE fleet.signed_heads (
  project_id bigint NOT NULL REFERENCES fleet.projects (id),
  machine fleet.role_name NOT NULL DEFAULT current_user REFERENCES fleet.machines (name),
  size bigint NOT NULL CHECK (size >= 0),
  root_hash text NOT NULL CHECK (length(root_hash) <= 256),
  checkpoint text NOT NULL CHECK (length(checkpoint) <= 65536),
  shipped_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, size)
);

-- The chain's order, held by the engine.
CREATE FUNCTION fleet.audit_next_in_chain() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = fleet, pg_temp AS $$
DECLARE
  head_seq bigint := 0;
  head_hash text := repeat('0', 64);
BEGIN
  SELECT seq, hash INTO head_seq, head_hash FROM fleet.audit_heads
   WHERE project_id = NEW.project_id FOR UPDATE;
  IF NOT FOUND THEN
    head_seq := 0;
    head_hash := repeat('0', 64);
  END IF;
  IF NEW.seq <> head_seq + 1 THEN
    RAISE EXCEPTION 'audit record % of project % is out of order: the ledger holds up to %',
      NEW.seq, NEW.project_id, head_seq USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.prev <> head_hash THEN
    RAISE EXCEPTION 'audit record % of project % does not follow record %: its prev is not that hash',
      NEW.seq, NEW.project_id, head_seq USING ERRCODE = 'check_violation';
  END IF;
  INSERT INTO fleet.audit_heads (project_id, machine, seq, hash)
       VALUES (NEW.project_id, NEW.machine, NEW.seq, NEW.hash)
  ON CONFLICT (project_id) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, updated_at = now();
  RETURN NEW;
END
$$;
CREATE TRIGGER audit_in_order BEFORE INSERT ON fleet.audit_records
  FOR EACH ROW EXECUTE FUNCTION fleet.audit_next_in_chain();

-- A decision wakes its machine's bridge: an empty payload on the machine's own
-- channel (the bridge reads the decision itself, under its policy).
CREATE FUNCTION fleet.notify_machine() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = fleet, pg_temp AS $$
DECLARE
  target text;
BEGIN
  SELECT machine INTO target FROM fleet.requests WHERE id = NEW.request_id;
  PERFORM pg_notify('fleet_machine_' || target, '');
  RETURN NEW;
END
$$;
CREATE TRIGGER decision_notifies AFTER INSERT ON fleet.decisions
  FOR EACH ROW EXECUTE FUNCTION fleet.notify_machine();

-- The bridge's LISTEN on its own channel (LISTEN takes no parameter: the name is
-- quoted by format(), from the session's own role).
CREATE FUNCTION fleet.listen_for_decisions() RETURNS text
LANGUAGE plpgsql SET search_path = fleet, pg_temp AS $$
DECLARE
  channel text := 'fleet_machine_' || current_user;
BEGIN
  EXECUTE format('LISTEN %I', channel);
  RETURN channel;
END
$$;

-- Grants: the statements each kind may run at all; the policies below narrow
-- the rows. A policy's subqueries run under the caller's own policies (no
-- SECURITY DEFINER helper: inside one, current_user is the owner).
GRANT SELECT ON fleet.machines, fleet.projects, fleet.requests, fleet.decisions,
  fleet.decision_outcomes, fleet.policy, fleet.audit_records, fleet.audit_heads,
  fleet.signed_heads TO fleet_machine;
GRANT INSERT ON fleet.projects, fleet.requests, fleet.decision_outcomes, fleet.audit_records,
  fleet.signed_heads TO fleet_machine;
GRANT SELECT ON fleet.machines, fleet.people, fleet.projects, fleet.delegations, fleet.requests,
  fleet.decisions, fleet.decision_outcomes, fleet.policy, fleet.audit_records,
  fleet.audit_heads, fleet.signed_heads TO fleet_person;
GRANT INSERT ON fleet.decisions TO fleet_person;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA fleet TO fleet_machine, fleet_person;
REVOKE ALL ON FUNCTION fleet.listen_for_decisions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.listen_for_decisions() TO fleet_machine;

ALTER TABLE fleet.machines ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.people ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.projects ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.delegations ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.requests ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.decisions ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.decision_outcomes ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.policy ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.audit_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.audit_heads ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.signed_heads ENABLE ROW LEVEL SECURITY;

CREATE POLICY machine_self ON fleet.machines FOR SELECT TO fleet_machine
  USING (name = current_user);
CREATE POLICY person_sees_machines ON fleet.machines FOR SELECT TO fleet_person USING (true);
CREATE POLICY person_self ON fleet.people FOR SELECT TO fleet_person USING (name = current_user);

CREATE POLICY machine_projects ON fleet.projects FOR SELECT TO fleet_machine
  USING (machine = current_user);
CREATE POLICY machine_adds_project ON fleet.projects FOR INSERT TO fleet_machine
  WITH CHECK (machine = current_user);
CREATE POLICY person_projects ON fleet.projects FOR SELECT TO fleet_person
  USING (id IN (SELECT project_id FROM fleet.delegations WHERE person = current_user));

CREATE POLICY person_delegations ON fleet.delegations FOR SELECT TO fleet_person
  USING (person = current_user);

CREATE POLICY machine_requests ON fleet.requests FOR SELECT TO fleet_machine
  USING (machine = current_user);
CREATE POLICY machine_files_request ON fleet.requests FOR INSERT TO fleet_machine
  WITH CHECK (machine = current_user AND project_id IN (SELECT id FROM fleet.projects WHERE machine = current_user));
CREATE POLICY person_requests ON fleet.requests FOR SELECT TO fleet_person
  USING (project_id IN (SELECT project_id FROM fleet.delegations WHERE person = current_user));

CREATE POLICY machine_decisions ON fleet.decisions FOR SELECT TO fleet_machine
  USING (request_id IN (SELECT id FROM fleet.requests WHERE machine = current_user));
CREATE POLICY person_decisions ON fleet.decisions FOR SELECT TO fleet_person
  USING (request_id IN (SELECT id FROM fleet.requests
                         WHERE project_id IN (SELECT project_id FROM fleet.delegations WHERE person = current_user)));
CREATE POLICY person_decides ON fleet.decisions FOR INSERT TO fleet_person
  WITH CHECK (decided_by = current_user
              AND request_id IN (SELECT id FROM fleet.requests
                                  WHERE project_id IN (SELECT project_id FROM fleet.delegations WHERE person = current_user)));

CREATE POLICY machine_outcomes ON fleet.decision_outcomes FOR SELECT TO fleet_machine
  USING (machine = current_user);
CREATE POLICY machine_reports_outcome ON fleet.decision_outcomes FOR INSERT TO fleet_machine
  WITH CHECK (machine = current_user
              AND decision_id IN (SELECT d.id FROM fleet.decisions d
                                   JOIN fleet.requests r ON r.id = d.request_id
                                  WHERE r.machine = current_user));
CREATE POLICY person_outcomes ON fleet.decision_outcomes FOR SELECT TO fleet_person
  USING (decision_id IN (SELECT id FROM fleet.decisions));

CREATE POLICY machine_policy ON fleet.policy FOR SELECT TO fleet_machine
  USING ((machine IS NULL OR machine = current_user)
         AND (expires_at IS NULL OR expires_at > now()));
CREATE POLICY person_policy ON fleet.policy FOR SELECT TO fleet_person USING (true);

CREATE POLICY machine_audit ON fleet.audit_records FOR SELECT TO fleet_machine
  USING (machine = current_user);
CREATE POLICY machine_ships_audit ON fleet.audit_records FOR INSERT TO fleet_machine
  WITH CHECK (machine = current_user AND project_id IN (SELECT id FROM fleet.projects WHERE machine = current_user));
CREATE POLICY person_audit ON fleet.audit_records FOR SELECT TO fleet_person
  USING (project_id IN (SELECT project_id FROM fleet.delegations WHERE person = current_user));

CREATE POLICY machine_heads ON fleet.audit_heads FOR SELECT TO fleet_machine
  USING (machine = current_user);
CREATE POLICY person_heads ON fleet.audit_heads FOR SELECT TO fleet_person
  USING (project_id IN (SELECT project_id FROM fleet.delegations WHERE person = current_user));

CREATE POLICY machine_signed ON fleet.signed_heads FOR SELECT TO fleet_machine
  USING (machine = current_user);
CREATE POLICY machine_ships_signed ON fleet.signed_heads FOR INSERT TO fleet_machine
  WITH CHECK (machine = current_user AND project_id IN (SELECT id FROM fleet.projects WHERE machine = current_user));
CREATE POLICY person_signed ON fleet.signed_heads FOR SELECT TO fleet_person
  USING (project_id IN (SELECT project_id FROM fleet.delegations WHERE person = current_user));

-- The administrator's functions. Role names are checked by the domain and
-- quoted by format(); passwords go through format('%L').
CREATE FUNCTION fleet.enroll_machine(name fleet.role_name, password text) RETURNS void
LANGUAGE plpgsql SET search_path = fleet, pg_temp AS $$
BEGIN
  EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L IN ROLE fleet_machine', name, password);
  INSERT INTO fleet.machines (name) VALUES (name);
END
$$;
CREATE FUNCTION fleet.enroll_person(name fleet.role_name, password text) RETURNS void
LANGUAGE plpgsql SET search_path = fleet, pg_temp AS $$
BEGIN
  EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L IN ROLE fleet_person', name, password);
  INSERT INTO fleet.people (name) VALUES (name);
END
$$;
-- Delegates the project ROOT on MACHINE to PERSON (the project row is made if its
-- bridge has not reported it yet).
CREATE FUNCTION fleet.delegate(person fleet.role_name, machine fleet.role_name, root text)
RETURNS bigint LANGUAGE plpgsql SET search_path = fleet, pg_temp AS $$
DECLARE
  project bigint;
BEGIN
  INSERT INTO fleet.projects (machine, root) VALUES (delegate.machine, delegate.root)
  ON CONFLICT ON CONSTRAINT projects_machine_root_key DO NOTHING;
  SELECT id INTO STRICT project FROM fleet.projects p
   WHERE p.machine = delegate.machine AND p.root = delegate.root;
  INSERT INTO fleet.delegations (person, project_id) VALUES (delegate.person, project)
  ON CONFLICT DO NOTHING;
  RETURN project;
END
$$;
REVOKE ALL ON FUNCTION fleet.enroll_machine(fleet.role_name, text),
  fleet.enroll_person(fleet.role_name, text),
  fleet.delegate(fleet.role_name, fleet.role_name, text) FROM PUBLIC;

-- migration: 2 policy notifies
-- A policy row inserted, changed or deleted wakes the bridges it concerns (the
-- row's machine, or every machine for an all-machines row), on the channel
-- their decisions use: an empty payload, the bridge reads its rows itself.
-- A rule's scope is '*' (every project of the machine) or one project's root.
ALTER TABLE fleet.policy ALTER COLUMN scope SET DEFAULT '*';
CREATE FUNCTION fleet.notify_policy() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = fleet, pg_temp AS $$
DECLARE
  target text := CASE WHEN TG_OP = 'DELETE' THEN OLD.machine ELSE NEW.machine END;
  m record;
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.machine IS DISTINCT FROM NEW.machine AND OLD.machine IS NOT NULL THEN
    PERFORM pg_notify('fleet_machine_' || OLD.machine, '');
  END IF;
  IF target IS NULL OR (TG_OP = 'UPDATE' AND OLD.machine IS NULL) THEN
    FOR m IN SELECT name FROM fleet.machines LOOP
      PERFORM pg_notify('fleet_machine_' || m.name, '');
    END LOOP;
  ELSE
    PERFORM pg_notify('fleet_machine_' || target, '');
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER policy_notifies AFTER INSERT OR UPDATE OR DELETE ON fleet.policy
  FOR EACH ROW EXECUTE FUNCTION fleet.notify_policy();
