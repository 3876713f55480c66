// Package act is Step 4 of the cycle: it resolves how the winning skill
// runs (its executor), runs it with the cycle's context, and reads back what
// it reported.
//
// Executors are an interface with a registry so that built-in skills,
// command skills, agent templates and simulated skills plug in side by
// side; the engine never knows which kind it is running.
package act
